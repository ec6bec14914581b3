import type { Knex } from 'knex';
import type { RoleName } from '../../domain/auth/roles';
import { grantedRoles } from '../../db/roles/role-assignments';

/**
 * The roles the service grants a subject (/Roles/Assignments), looked up on every authenticated
 * request. Cached per subject for a few seconds so a request costs no extra query in the common
 * case; a change made through this process applies at once (`forget`), one made through another
 * API process within GRANTS_TTL_MS.
 */
export interface RoleGrants {
  rolesOf(subject: string): Promise<RoleName[]>;
  forget(subject: string): void;
}

export const GRANTS_TTL_MS = 5_000;
const MAX_CACHED_SUBJECTS = 10_000;

interface Entry {
  roles: Promise<RoleName[]>;
  expiresAt: number;
}

export function cachedRoleGrants(knex: Knex, ttlMs = GRANTS_TTL_MS): RoleGrants {
  const cache = new Map<string, Entry>();
  return {
    rolesOf(subject) {
      const now = Date.now();
      const hit = cache.get(subject);
      if (hit && hit.expiresAt > now) return hit.roles;
      if (cache.size >= MAX_CACHED_SUBJECTS) {
        // Map iterates in insertion order: drop the oldest entry.
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
      // Concurrent requests of one subject share the lookup; a failed lookup is not cached.
      const roles = grantedRoles(knex, subject);
      const entry = { roles, expiresAt: now + ttlMs };
      cache.delete(subject);
      cache.set(subject, entry);
      roles.catch(() => {
        if (cache.get(subject) === entry) cache.delete(subject);
      });
      return roles;
    },
    forget(subject) {
      cache.delete(subject);
    },
  };
}
