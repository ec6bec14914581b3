import type { ReadLimits } from '../../../domain/queries/read-limits';

/** What `$metadata` says that varies by deployment: the read limits (MAX_TOP, MAX_EXPAND_DEPTH). */
export type MetadataSettings = Pick<ReadLimits, 'maxTop' | 'maxExpandDepth'>;
