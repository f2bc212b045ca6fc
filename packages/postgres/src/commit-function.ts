/**
 * The commit as one PL/pgSQL function, `<schema>.scanauth_commit(changes jsonb) RETURNS jsonb`, so
 * that a commit is one statement and one round trip, atomic on its own (a statement outside an
 * explicit transaction is its own transaction).
 *
 * It knows nothing of the rules of docs/behaviour.md: it checks the change set's expectations,
 * all of them before any write, in MemoryStore's order (scene, user, idempotency key), then writes
 * the records exactly as given, resolving `NEW_USER` and `{ inserted: i }` references to the ids
 * it assigned. Expectations on stored aggregates lock their rows (`SELECT … FOR UPDATE`), always the
 * scene before the user, so two commits never wait for each other in a cycle. Expectations that a
 * key is free are checked with a plain read first; when a concurrent commit inserts the same key
 * between that read and our insert, the insert fails with a unique violation, the whole statement
 * rolls back, and the store reports the conflict named by the constraint (see `postgres-store.ts`).
 * It sends no notification: `pg_notify` inside the commit would make every scene commit take
 * PostgreSQL's server-wide notify lock and hold it through the commit's WAL flush, so scans would
 * commit one at a time (docs/postgres.md, "Waiting for a scan"). The store notifies after the
 * commit, in a statement of its own (`scene-notifier.ts`).
 *
 * A change set that breaks the Store contract (an authorization of another user, a reference to an
 * insert that is not there) raises SQLSTATE `SA422`, which the store turns into
 * `PostgresStoreError` `invalid_change_set`.
 *
 * @module
 */

/** The SQLSTATE the functions raise for a change set that breaks the Store contract. */
export const INVALID_CHANGE_SET_SQLSTATE = 'SA422'

/**
 * The functions as migration 1 created them, for the quoted schema `s`: the two reference helpers and
 * `scanauth_commit` writing the scene columns of that version. Migration 1 is released, so this text
 * never changes (schema.ts); later scene columns come with {@link commitFunctionV3Sql}, which replaces
 * `scanauth_commit` in migration 3.
 */
export function commitFunctionSql(s: string): string {
  const bad = INVALID_CHANGE_SET_SQLSTATE
  return `
    -- A user reference of a change set: an id, or "new-user" for the user the same commit inserted.
    CREATE FUNCTION ${s}.scanauth_user_ref(ref jsonb, new_user bigint) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE AS $fn$
    BEGIN
      IF jsonb_typeof(ref) = 'number' THEN RETURN (ref #>> '{}')::bigint; END IF;
      IF ref #>> '{}' = 'new-user' AND new_user IS NOT NULL THEN RETURN new_user; END IF;
      RAISE EXCEPTION 'the change set refers to % but inserts no user', ref USING ERRCODE = '${bad}';
    END
    $fn$;

    -- An authorization reference: an id, or {"inserted": i} for the i-th (from 0) inserted one.
    CREATE FUNCTION ${s}.scanauth_authorization_ref(ref jsonb, inserted bigint[]) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE AS $fn$
    DECLARE
      id bigint;
    BEGIN
      IF jsonb_typeof(ref) = 'number' THEN RETURN (ref #>> '{}')::bigint; END IF;
      id := inserted[(ref ->> 'inserted')::integer + 1];
      IF id IS NULL THEN
        RAISE EXCEPTION 'the change set refers to inserted authorization % but inserts %', ref ->> 'inserted', cardinality(inserted)
          USING ERRCODE = '${bad}';
      END IF;
      RETURN id;
    END
    $fn$;

${commitFunction(s, 'CREATE FUNCTION', sceneWritesV1(s))}
  `
}

/**
 * `scanauth_commit` as migration 3 replaces it (`CREATE OR REPLACE`, the same signature, so callers and
 * grants are kept): the same checks and writes, and the scene columns of confirm on the phone
 * (docs/behaviour.md B-confirm-1, B-confirm-2, B-confirm-5, B-confirm-7) and of the poll secret (B-secret-1).
 */
export function commitFunctionV3Sql(s: string): string {
  return `
${commitFunction(s, 'CREATE OR REPLACE FUNCTION', sceneWritesV3(s))}
  `
}

/** `scanauth_commit` with `sceneWrites` as the body of its scene write (`IF sc IS NOT NULL THEN … END IF;`). */
function commitFunction(s: string, create: 'CREATE FUNCTION' | 'CREATE OR REPLACE FUNCTION', sceneWrites: string): string {
  const bad = INVALID_CHANGE_SET_SQLSTATE
  return `    ${create} ${s}.scanauth_commit(changes jsonb) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      sc jsonb := changes -> 'scene';
      us jsonb := changes -> 'user';
      se jsonb := changes -> 'session';
      idem jsonb := changes -> 'idempotency';
      draft jsonb := sc -> 'scene';
      u jsonb := us -> 'user';
      a jsonb;
      stored_version bigint;
      owner_id bigint;
      new_user_id bigint;
      new_scene_id bigint;
      new_session_id bigint;
      new_id bigint;
      inserted bigint[] := '{}';
    BEGIN
      -- Every expectation, before any write.
      IF sc IS NOT NULL THEN
        IF sc ->> 'op' = 'update' THEN
          SELECT version INTO stored_version FROM ${s}.scanauth_scenes WHERE id = (draft ->> 'id')::bigint FOR UPDATE;
          IF stored_version IS DISTINCT FROM (sc ->> 'expectedVersion')::bigint THEN
            RETURN '{"ok": false, "conflict": "scene"}'::jsonb;
          END IF;
        ELSIF EXISTS (SELECT 1 FROM ${s}.scanauth_scenes WHERE scene_str = draft ->> 'sceneStr') THEN
          RETURN '{"ok": false, "conflict": "scene"}'::jsonb;
        END IF;
      END IF;
      IF us IS NOT NULL THEN
        IF us ->> 'op' = 'update' THEN
          SELECT version INTO stored_version FROM ${s}.scanauth_users WHERE id = (u ->> 'id')::bigint FOR UPDATE;
          IF stored_version IS DISTINCT FROM (us ->> 'expectedVersion')::bigint THEN
            RETURN '{"ok": false, "conflict": "user"}'::jsonb;
          END IF;
        ELSIF EXISTS (SELECT 1 FROM ${s}.scanauth_users WHERE openid = u ->> 'openid') THEN
          RETURN '{"ok": false, "conflict": "user"}'::jsonb;
        END IF;
      END IF;
      IF idem IS NOT NULL AND EXISTS (SELECT 1 FROM ${s}.scanauth_idempotency WHERE key = idem ->> 'key') THEN
        RETURN '{"ok": false, "conflict": "idempotency"}'::jsonb;
      END IF;

      -- The user and its authorizations.
      IF us IS NOT NULL THEN
        IF us ->> 'op' = 'insert' THEN
          INSERT INTO ${s}.scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version)
          VALUES (u ->> 'openid', (u ->> 'createdAt')::float8, (u ->> 'lastSeenAt')::float8, (u ->> 'hasClaimedFree')::boolean, (u ->> 'version')::bigint)
          RETURNING id INTO new_user_id;
          owner_id := new_user_id;
        ELSE
          owner_id := (u ->> 'id')::bigint;
          UPDATE ${s}.scanauth_users SET openid = u ->> 'openid', created_at = (u ->> 'createdAt')::float8,
            last_seen_at = (u ->> 'lastSeenAt')::float8, has_claimed_free = (u ->> 'hasClaimedFree')::boolean,
            version = (u ->> 'version')::bigint
          WHERE id = owner_id;
        END IF;
        -- One INSERT per element, in the order given: ids increase in that order.
        FOR a IN SELECT e FROM jsonb_array_elements(us -> 'insertAuthorizations') WITH ORDINALITY AS t(e, n) ORDER BY n LOOP
          INSERT INTO ${s}.scanauth_authorizations
            (user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at)
          VALUES (owner_id, a ->> 'type', a ->> 'status', (a ->> 'startAt')::float8, (a ->> 'endAt')::float8,
            (a ->> 'remainingPoints')::bigint, (a ->> 'totalPoints')::bigint, a ->> 'source',
            (a ->> 'createdAt')::float8, (a ->> 'updatedAt')::float8)
          RETURNING id INTO new_id;
          inserted := inserted || new_id;
        END LOOP;
        IF us ->> 'op' = 'update' THEN
          FOR a IN SELECT e FROM jsonb_array_elements(us -> 'updateAuthorizations') AS t(e) LOOP
            -- user_id in the WHERE clause: an authorization is only ever updated through its own user.
            UPDATE ${s}.scanauth_authorizations SET type = a ->> 'type', status = a ->> 'status',
              start_at = (a ->> 'startAt')::float8, end_at = (a ->> 'endAt')::float8,
              remaining_points = (a ->> 'remainingPoints')::bigint, total_points = (a ->> 'totalPoints')::bigint,
              source = a ->> 'source', created_at = (a ->> 'createdAt')::float8, updated_at = (a ->> 'updatedAt')::float8
            WHERE id = (a ->> 'id')::bigint AND user_id = owner_id;
            IF NOT FOUND THEN
              RAISE EXCEPTION 'authorization % is not an authorization of user %', a ->> 'id', owner_id USING ERRCODE = '${bad}';
            END IF;
          END LOOP;
        END IF;
      END IF;

      -- The scene (its notification is sent by the store after the commit: scene-notifier.ts).
      IF sc IS NOT NULL THEN
${sceneWrites}
      END IF;

      IF se IS NOT NULL THEN
        INSERT INTO ${s}.scanauth_sessions (token, user_id, device_id, scene_id, created_at, expires_at)
        VALUES (se ->> 'token', ${s}.scanauth_user_ref(se -> 'userId', new_user_id), se ->> 'deviceId', (se ->> 'sceneId')::bigint,
          (se ->> 'createdAt')::float8, (se ->> 'expiresAt')::float8)
        RETURNING id INTO new_session_id;
      END IF;

      FOR a IN SELECT e FROM jsonb_array_elements(COALESCE(changes -> 'ledger', '[]'::jsonb)) WITH ORDINALITY AS t(e, n) ORDER BY n LOOP
        INSERT INTO ${s}.scanauth_ledger (user_id, authorization_id, kind, points, remaining_points, at, source, idempotency_key, reason)
        VALUES (${s}.scanauth_user_ref(a -> 'userId', new_user_id), ${s}.scanauth_authorization_ref(a -> 'authorizationId', inserted),
          a ->> 'kind', (a ->> 'points')::bigint, (a ->> 'remainingPoints')::bigint, (a ->> 'at')::float8,
          a ->> 'source', a ->> 'idempotencyKey', a ->> 'reason');
      END LOOP;

      IF idem IS NOT NULL THEN
        INSERT INTO ${s}.scanauth_idempotency (key, fingerprint, authorization_id, result, created_at)
        VALUES (idem ->> 'key', idem ->> 'fingerprint',
          CASE WHEN idem ->> 'authorizationId' IS NULL THEN NULL ELSE ${s}.scanauth_authorization_ref(idem -> 'authorizationId', inserted) END,
          idem ->> 'result', (idem ->> 'createdAt')::float8);
      END IF;

      RETURN jsonb_build_object('ok', true, 'ids', jsonb_build_object(
        'sceneId', new_scene_id, 'userId', new_user_id, 'sessionId', new_session_id, 'authorizationIds', to_jsonb(inserted)));
    END
    $fn$;`
}

/** The scene's insert or update as migration 1 wrote it: the columns of that version only. */
function sceneWritesV1(s: string): string {
  return `        IF sc ->> 'op' = 'insert' THEN
          INSERT INTO ${s}.scanauth_scenes (scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version)
          VALUES (draft ->> 'sceneStr', draft ->> 'deviceId', draft ->> 'status', (draft ->> 'userId')::bigint,
            (draft ->> 'createdAt')::float8, (draft ->> 'expiresAt')::float8, (draft ->> 'authorizedAt')::float8, (draft ->> 'version')::bigint)
          RETURNING id INTO new_scene_id;
        ELSE
          UPDATE ${s}.scanauth_scenes SET scene_str = draft ->> 'sceneStr', device_id = draft ->> 'deviceId', status = draft ->> 'status',
            user_id = CASE WHEN draft ->> 'userId' IS NULL THEN NULL ELSE ${s}.scanauth_user_ref(draft -> 'userId', new_user_id) END,
            created_at = (draft ->> 'createdAt')::float8, expires_at = (draft ->> 'expiresAt')::float8,
            authorized_at = (draft ->> 'authorizedAt')::float8, version = (draft ->> 'version')::bigint
          WHERE id = (draft ->> 'id')::bigint;
        END IF;`
}

/**
 * The scene's insert or update from migration 3 on: every column of the record. The confirmation
 * is four columns (schema.ts, migration 3), read with `#>>` paths that give NULL when the draft's
 * `confirmation` is JSON null; `confirm_ticket_hash` is thereby set whenever the scene is written
 * with a confirmation, which is what the ticket lookup searches (B-confirm-2, B-confirm-4).
 *
 * A draft without the new keys comes from a process of the previous release, still running while
 * the fleet is upgraded (docs/postgres.md, "Migrations"): its JSON has no `requestedFrom`,
 * `pollSecretHash` or `confirmation` at all, where this release always sends them, null included.
 * An insert stores NULL for them, as on the rows older than the columns; an update keeps what is
 * stored (`CASE WHEN draft ? key`), so that an old process authorizing a scene a new one created
 * does not erase its poll secret digest and hand the session token to anyone polling (B-secret-2).
 */
function sceneWritesV3(s: string): string {
  return `        IF sc ->> 'op' = 'insert' THEN
          INSERT INTO ${s}.scanauth_scenes (scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version,
            requested_from, poll_secret_hash, confirm_scanned_by, confirm_scanned_at, confirm_ticket_hash, confirm_csrf_hash)
          VALUES (draft ->> 'sceneStr', draft ->> 'deviceId', draft ->> 'status', (draft ->> 'userId')::bigint,
            (draft ->> 'createdAt')::float8, (draft ->> 'expiresAt')::float8, (draft ->> 'authorizedAt')::float8, (draft ->> 'version')::bigint,
            draft ->> 'requestedFrom', draft ->> 'pollSecretHash', draft #>> '{confirmation,scannedBy}',
            (draft #>> '{confirmation,scannedAt}')::float8, draft #>> '{confirmation,ticketHash}', draft #>> '{confirmation,csrfHash}')
          RETURNING id INTO new_scene_id;
        ELSE
          UPDATE ${s}.scanauth_scenes SET scene_str = draft ->> 'sceneStr', device_id = draft ->> 'deviceId', status = draft ->> 'status',
            user_id = CASE WHEN draft ->> 'userId' IS NULL THEN NULL ELSE ${s}.scanauth_user_ref(draft -> 'userId', new_user_id) END,
            created_at = (draft ->> 'createdAt')::float8, expires_at = (draft ->> 'expiresAt')::float8,
            authorized_at = (draft ->> 'authorizedAt')::float8, version = (draft ->> 'version')::bigint,
            requested_from = CASE WHEN draft ? 'requestedFrom' THEN draft ->> 'requestedFrom' ELSE requested_from END,
            poll_secret_hash = CASE WHEN draft ? 'pollSecretHash' THEN draft ->> 'pollSecretHash' ELSE poll_secret_hash END,
            confirm_scanned_by = CASE WHEN draft ? 'confirmation' THEN draft #>> '{confirmation,scannedBy}' ELSE confirm_scanned_by END,
            confirm_scanned_at = CASE WHEN draft ? 'confirmation' THEN (draft #>> '{confirmation,scannedAt}')::float8 ELSE confirm_scanned_at END,
            confirm_ticket_hash = CASE WHEN draft ? 'confirmation' THEN draft #>> '{confirmation,ticketHash}' ELSE confirm_ticket_hash END,
            confirm_csrf_hash = CASE WHEN draft ? 'confirmation' THEN draft #>> '{confirmation,csrfHash}' ELSE confirm_csrf_hash END
          WHERE id = (draft ->> 'id')::bigint;
        END IF;`
}
