import { PACKAGE_VERSION } from '../../protocol/version.ts';

export const HUB_VERSION = PACKAGE_VERSION;
