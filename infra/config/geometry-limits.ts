import type { AppConfig } from './load-config';
import type { GeometryLimits } from '../../domain/writes/geometry-limits';

/** The geometry limits of a configuration, for the API (before queuing) and the worker (before applying). */
export function geometryLimitsOf(config: AppConfig): GeometryLimits {
  return {
    maxLength: config.limits.maxGeometryLength,
    maxVertices: config.limits.maxGeometryVertices,
    maxDepth: config.limits.maxGeometryDepth,
  };
}
