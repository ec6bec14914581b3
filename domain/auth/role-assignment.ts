import { AVAILABLE_ROLES, isRoleName, type RoleName } from './roles';

/**
 * A role granted to a subject by the service, on top of whatever its token claims (DESIGN §7).
 * Grants are not entities: they have no entity route and are written directly, not as commands.
 */
export const ROLE_ASSIGNMENT_TYPE = 'RoleAssignment';

export interface RoleAssignmentInput {
  Subject: string;
  Role: RoleName;
}

export const MAX_SUBJECT_LENGTH = 255;

/** Members a client may send back unchanged from a GET; they are ignored (DESIGN §10). */
const READ_ONLY = new Set(['Id', 'CreatedAt', 'CreatedBy']);

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** Checks a `POST /Roles/Assignments` body; errors read `RoleAssignment.<Field>: <message>`. */
export function validateRoleAssignment(body: unknown): Validated<RoleAssignmentInput> {
  const at = (field: string) => `${ROLE_ASSIGNMENT_TYPE}.${field}`;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, errors: [`${ROLE_ASSIGNMENT_TYPE}: must be a JSON object with Subject and Role`] };
  }
  const record = body as Record<string, unknown>;
  const errors: string[] = [];
  for (const name of Object.keys(record)) {
    if (name !== 'Subject' && name !== 'Role' && !READ_ONLY.has(name)) errors.push(`${at(name)}: is not a known field`);
  }
  const { Subject: subject, Role: role } = record;
  if (subject === undefined || subject === null) errors.push(`${at('Subject')}: is required`);
  else if (typeof subject !== 'string') errors.push(`${at('Subject')}: must be a string`);
  else if (subject.trim() === '') errors.push(`${at('Subject')}: must not be blank`);
  else if (subject.length > MAX_SUBJECT_LENGTH) {
    errors.push(`${at('Subject')}: must be at most ${MAX_SUBJECT_LENGTH} characters`);
  } else if (subject !== subject.trim()) errors.push(`${at('Subject')}: must not start or end with whitespace`);

  if (role === undefined || role === null) errors.push(`${at('Role')}: is required`);
  else if (!isRoleName(role)) {
    errors.push(`${at('Role')}: must be one of ${AVAILABLE_ROLES.map((r) => r.Name).join(', ')}`);
  }
  if (errors.length) return { ok: false, errors };
  return { ok: true, value: { Subject: subject as string, Role: role as RoleName } };
}
