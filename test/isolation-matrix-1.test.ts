// Shard 1 of the tenant-isolation matrix (test/helpers/isolation-matrix.ts).
import { isolationMatrixShard } from './helpers/isolation-matrix.ts';

isolationMatrixShard(1);
