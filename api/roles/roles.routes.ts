import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { ROLE_ASSIGNMENT_TYPE, validateRoleAssignment } from '../../domain/auth/role-assignment';
import { AVAILABLE_ROLES, isRoleName } from '../../domain/auth/roles';
import {
  badRequest,
  conflict,
  notFound,
  unsupportedMediaType,
  validationFailed,
} from '../../domain/errors/domain-error';
import { decodeId } from '../../domain/ids/id-codec';
import {
  addRoleAssignment,
  findRoleAssignment,
  listRoleAssignments,
  removeRoleAssignment,
} from '../../db/roles/role-assignments';
import { callerOf } from '../auth/caller';
import type { RoleGrants } from '../auth/role-grants';

export interface RolesRouteDeps {
  knex: Knex;
  grants: RoleGrants;
}

const ASSIGNMENTS = '/Roles/Assignments';

/**
 * /Roles (DESIGN §7): who am I (any authenticated caller, role or not), which roles exist
 * (User/Admin), and the grants the service keeps (Admin). Grants are written here directly, in
 * one statement each: they are access control, not entity data, so they do not go through the
 * command queue. Their policies are in the route table (api/routes/route-table.ts).
 */
export function rolesHandlers(deps: RolesRouteDeps) {
  const whoAmI: RequestHandler = (req: Request, res: Response) => {
    const caller = callerOf(req);
    res.json({ Subject: caller.subject, Roles: caller.roles });
  };

  const availableRoles: RequestHandler = (_req: Request, res: Response) => {
    res.json(AVAILABLE_ROLES);
  };

  const list: RequestHandler = async (req: Request, res: Response) => {
    const { subject, role, ...rest } = req.query as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length) throw badRequest(`unknown query parameter '${unknown[0]}' (use subject or role)`);
    if (subject !== undefined && typeof subject !== 'string') throw badRequest('subject: given more than once');
    if (role !== undefined && !isRoleName(role)) {
      throw badRequest(`role: must be one of ${AVAILABLE_ROLES.map((r) => r.Name).join(', ')}`);
    }
    res.json(await listRoleAssignments(deps.knex, { subject, role }));
  };

  const add: RequestHandler = async (req: Request, res: Response) => {
    if (!req.is('application/json')) throw unsupportedMediaType('Send the assignment as application/json.');
    const checked = validateRoleAssignment(req.body);
    if (!checked.ok) throw validationFailed(checked.errors);
    const { Subject, Role } = checked.value;
    const created = await addRoleAssignment(deps.knex, checked.value, callerOf(req).subject);
    if (!created) throw conflict([`${ROLE_ASSIGNMENT_TYPE}: '${Subject}' already holds the role ${Role}`]);
    deps.grants.forget(Subject);
    res.status(201).location(`${ASSIGNMENTS}/${created.Id}`).json(created);
  };

  const get: RequestHandler = async (req: Request, res: Response) => {
    const found = await findRoleAssignment(deps.knex, assignmentKey(req.params.id as string));
    if (!found) throw missing(req.params.id as string);
    res.json(found);
  };

  const remove: RequestHandler = async (req: Request, res: Response) => {
    const removed = await removeRoleAssignment(deps.knex, assignmentKey(req.params.id as string));
    if (!removed) throw missing(req.params.id as string);
    deps.grants.forget(removed.Subject);
    res.status(204).end();
  };

  return {
    whoAmI,
    availableRoles,
    listRoleAssignments: list,
    addRoleAssignment: add,
    getRoleAssignment: get,
    removeRoleAssignment: remove,
  };
}

function assignmentKey(key: string): number {
  const id = decodeId(ROLE_ASSIGNMENT_TYPE, key);
  if (id === null) throw missing(key);
  return id;
}

function missing(key: string) {
  return notFound(`${ROLE_ASSIGNMENT_TYPE} '${key}' does not exist.`);
}
