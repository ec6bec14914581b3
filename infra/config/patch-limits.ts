import type { AppConfig } from './load-config';
import type { PatchLimits } from '../../domain/writes/json-patch';

/** The JSON Patch limits of a configuration, for the API (before queuing) and the worker (while applying). */
export function patchLimitsOf(config: AppConfig): PatchLimits {
  return {
    maxOperations: config.limits.maxPatchOperations,
    maxDocumentBytes: config.limits.maxPatchedDocumentBytes,
  };
}
