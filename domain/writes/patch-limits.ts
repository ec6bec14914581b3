import type { AppConfig } from '../config/load-config';
import type { PatchLimits } from './json-patch';

/** The JSON Patch limits of a configuration, for the API (before queuing) and the worker (while applying). */
export function patchLimitsOf(config: AppConfig): PatchLimits {
  return {
    maxOperations: config.limits.maxPatchOperations,
    maxDocumentBytes: config.limits.maxPatchedDocumentBytes,
  };
}
