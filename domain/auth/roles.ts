/**
 * The roles the service knows and the policies of spec §5. Role names are exact (`User`, `Admin`,
 * DESIGN §10): a token claiming `user` or `ADMIN` holds no role here.
 */

export const ROLE = { User: 'User', Admin: 'Admin' } as const;

export type RoleName = (typeof ROLE)[keyof typeof ROLE];

export const AVAILABLE_ROLES: readonly { Name: RoleName; Description: string }[] = [
  { Name: ROLE.User, Description: 'Reads and writes every entity route, and exports.' },
  { Name: ROLE.Admin, Description: 'Everything User may do, plus /Jobs, Bull Board and role assignments.' },
];

const ROLE_NAMES = new Set<string>(Object.values(ROLE));

export function isRoleName(value: unknown): value is RoleName {
  return typeof value === 'string' && ROLE_NAMES.has(value);
}

/** Who may pass: a caller holding any one of the listed roles. */
export const POLICY = {
  /** Every entity read and write, /Export, /Roles/Available (spec §5.3). */
  default: [ROLE.User, ROLE.Admin],
  /** /Jobs, Bull Board, /Roles/Assignments. */
  adminOnly: [ROLE.Admin],
} as const satisfies Record<string, readonly RoleName[]>;

export type Policy = readonly RoleName[];

export function policyAllows(policy: Policy, roles: readonly string[]): boolean {
  return roles.some((role) => (policy as readonly string[]).includes(role));
}

/**
 * The claim holding the roles: a top-level member first (names like `https://example.com/roles`
 * contain dots), otherwise a dotted path into nested objects (Keycloak's `realm_access.roles`).
 */
export function claimAt(payload: Record<string, unknown>, claim: string): unknown {
  if (claim in payload) return payload[claim];
  let value: unknown = payload;
  for (const segment of claim.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** Known role names in a claim that is a string (one role) or an array of strings. */
export function rolesInClaim(value: unknown): RoleName[] {
  const names = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return names.filter(isRoleName);
}

/** Token roles plus service grants, each once, in the order AVAILABLE_ROLES lists them. */
export function mergeRoles(...sets: readonly (readonly RoleName[])[]): RoleName[] {
  const held = new Set(sets.flat());
  return AVAILABLE_ROLES.map((r) => r.Name).filter((name) => held.has(name));
}
