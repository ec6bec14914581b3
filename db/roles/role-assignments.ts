import type { Knex } from 'knex';
import { ROLE_ASSIGNMENT_TYPE, type RoleAssignmentInput } from '../../domain/auth/role-assignment';
import { isRoleName, type RoleName } from '../../domain/auth/roles';
import { encodeId } from '../../domain/ids/id-codec';

/** Role grants in Postgres, as `/Roles/Assignments` shows them (`Id` encoded like entity Ids). */

export interface RoleAssignment {
  Id: string;
  Subject: string;
  Role: RoleName;
  CreatedAt: string;
  CreatedBy: string;
}

interface Row {
  id: number;
  subject: string;
  role: RoleName;
  created_by: string;
  created_at: Date;
}

const TABLE = 'role_assignments';

function toAssignment(row: Row): RoleAssignment {
  return {
    Id: encodeId(ROLE_ASSIGNMENT_TYPE, row.id),
    Subject: row.subject,
    Role: row.role,
    CreatedAt: row.created_at.toISOString(),
    CreatedBy: row.created_by,
  };
}

export async function listRoleAssignments(
  knex: Knex,
  filter: { subject?: string; role?: RoleName } = {},
): Promise<RoleAssignment[]> {
  const query = knex<Row>(TABLE).select('*').orderBy('id');
  if (filter.subject !== undefined) query.where('subject', filter.subject);
  if (filter.role !== undefined) query.where('role', filter.role);
  return (await query).map(toAssignment);
}

export async function findRoleAssignment(knex: Knex, id: number): Promise<RoleAssignment | null> {
  const row = await knex<Row>(TABLE).where('id', id).first();
  return row ? toAssignment(row) : null;
}

/** Adds a grant; null when the subject already holds that role. */
export async function addRoleAssignment(
  knex: Knex,
  input: RoleAssignmentInput,
  createdBy: string,
): Promise<RoleAssignment | null> {
  const rows = await knex<Row>(TABLE)
    .insert({ subject: input.Subject, role: input.Role, created_by: createdBy })
    .onConflict(['subject', 'role'])
    .ignore()
    .returning('*');
  return rows[0] ? toAssignment(rows[0] as Row) : null;
}

/** Removes a grant; returns what was removed, or null when there was none. */
export async function removeRoleAssignment(knex: Knex, id: number): Promise<RoleAssignment | null> {
  const rows = await knex<Row>(TABLE).where('id', id).delete().returning('*');
  return rows[0] ? toAssignment(rows[0] as Row) : null;
}

export async function grantedRoles(knex: Knex, subject: string): Promise<RoleName[]> {
  const rows = await knex<Row>(TABLE).where('subject', subject).select('role');
  return rows.map((r) => r.role).filter(isRoleName);
}

/** The grants of many subjects in one statement (a subject without any is absent from the map). */
export async function grantedRolesOf(knex: Knex, subjects: readonly string[]): Promise<Map<string, RoleName[]>> {
  const granted = new Map<string, RoleName[]>();
  if (subjects.length === 0) return granted;
  const rows = await knex<Row>(TABLE).whereIn('subject', subjects).select('subject', 'role');
  for (const row of rows) {
    if (!isRoleName(row.role)) continue;
    granted.set(row.subject, [...(granted.get(row.subject) ?? []), row.role]);
  }
  return granted;
}
