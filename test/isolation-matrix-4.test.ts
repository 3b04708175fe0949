// Shard 4 of the tenant-isolation matrix (test/helpers/isolation-matrix.ts).
import { isolationMatrixShard } from './helpers/isolation-matrix.ts';

isolationMatrixShard(4);
