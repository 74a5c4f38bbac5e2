SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;
COMMENT ON SCHEMA public IS '';
SET default_tablespace = '';
SET default_table_access_method = heap;
CREATE TABLE public.arrows (
    id text NOT NULL,
    workspace text,
    src text,
    dst text,
    from_port text,
    to_port text
);
CREATE TABLE public.changes (
    seq bigint NOT NULL,
    t double precision NOT NULL,
    kind text NOT NULL,
    subject text NOT NULL
);
CREATE TABLE public.consent (
    seq bigint NOT NULL,
    t double precision,
    principal text,
    action text,
    subject text,
    accepted integer,
    code text,
    reason text,
    detail text,
    prev text,
    hash text,
    grants text
);
CREATE TABLE public.grants (
    package text NOT NULL,
    permission text NOT NULL,
    t double precision,
    by text
);
CREATE TABLE public.log (
    seq bigint NOT NULL,
    t double precision,
    workspace text,
    arrow text,
    card text,
    package text,
    version text,
    call text,
    target text,
    payload text,
    chain text,
    outcome text,
    code text,
    reason text,
    approver text,
    prompt text,
    prev text NOT NULL,
    hash text NOT NULL,
    payload_bytes bigint,
    payload_sha256 text
);
CREATE TABLE public.meta (
    key text NOT NULL,
    value text
);
CREATE TABLE public.nodes (
    id text NOT NULL,
    workspace text,
    type text,
    data text,
    "position" bigint
);
CREATE TABLE public.packages (
    name text NOT NULL,
    state text,
    manifest text,
    digests text,
    hash text,
    pending_manifest text,
    pending_digests text,
    pending_hash text
);
CREATE TABLE public.prompt_budget (
    workspace text NOT NULL,
    level double precision NOT NULL,
    at double precision NOT NULL
);
CREATE TABLE public.prompts (
    id text NOT NULL,
    "position" bigint,
    workspace text,
    card text,
    package text,
    agent text,
    arrow text,
    call text,
    text text,
    chain text,
    state text,
    t double precision,
    deadline double precision,
    approver text,
    code text,
    reason text,
    message text
);
CREATE TABLE public.rate_events (
    id bigint NOT NULL,
    card text,
    key text,
    t double precision
);
ALTER TABLE public.rate_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.rate_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE public.schema_migrations (
    "position" integer NOT NULL,
    name text NOT NULL,
    applied_at double precision NOT NULL
);
CREATE TABLE public.secrets (
    name text NOT NULL,
    host text,
    value text,
    t double precision
);
CREATE TABLE public.service_tokens (
    id text NOT NULL,
    hash text,
    principal text,
    t double precision,
    revoked double precision
);
CREATE TABLE public.suppressed_pending (
    key text NOT NULL,
    summary text NOT NULL
);
CREATE TABLE public.tool_calls (
    id text NOT NULL,
    "position" bigint,
    workspace text,
    agent text,
    card text,
    package text,
    tool text,
    arrow text,
    args text,
    chain text,
    state text,
    t double precision,
    deadline double precision,
    result text,
    code text,
    reason text,
    message text,
    ended double precision
);
CREATE TABLE public.usage (
    workspace text NOT NULL,
    tokens bigint,
    cost double precision
);
CREATE TABLE public.workspaces (
    id text NOT NULL,
    folder text,
    settings text
);
INSERT INTO public.arrows VALUES ('e1', 'w1', 'c1', 'a1', NULL, NULL);
INSERT INTO public.arrows VALUES ('e2', 'w1', 'c1', 'y1', NULL, NULL);
INSERT INTO public.arrows VALUES ('e3', 'w1', 'c1', 't1', NULL, NULL);
INSERT INTO public.arrows VALUES ('e4', 'w1', 'a1', 'c1', NULL, NULL);
INSERT INTO public.arrows VALUES ('e5', 'w1', 'c2', 'a1', NULL, NULL);
INSERT INTO public.arrows VALUES ('e6', 'w1', 'c1', 'n1', NULL, NULL);
INSERT INTO public.arrows VALUES ('e7', 'w1', 'c1', 'a2', NULL, NULL);
INSERT INTO public.changes VALUES (1, 1796628287.3459513, 'state', '{"tables": ["workspaces"], "touched": [["workspace", "w1", null, null]]}');
INSERT INTO public.changes VALUES (2, 1796628287.347069, 'state', '{"tables": ["packages"], "touched": [["package", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (3, 1796628287.3488464, 'state', '{"tables": ["grants", "packages"], "touched": [["package", "acme.standup", null, null], ["grants", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (4, 1796628287.3495324, 'state', '{"tables": ["packages"], "touched": [["package", "acme.other", null, null]]}');
INSERT INTO public.changes VALUES (5, 1796628287.3506658, 'state', '{"tables": ["grants", "packages"], "touched": [["package", "acme.other", null, null], ["grants", "acme.other", null, null]]}');
INSERT INTO public.changes VALUES (6, 1796628287.3517005, 'state', '{"tables": ["grants"], "touched": [["grants", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (7, 1796628287.3526695, 'state', '{"tables": ["grants"], "touched": [["grants", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (8, 1796628287.35372, 'state', '{"tables": ["grants"], "touched": [["grants", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (9, 1796628287.3544347, 'state', '{"tables": ["grants"], "touched": [["grants", "acme.other", null, null]]}');
INSERT INTO public.changes VALUES (10, 1796628287.3554149, 'state', '{"tables": ["nodes"], "touched": [["node", "c1", null, null]]}');
INSERT INTO public.changes VALUES (11, 1796628287.356205, 'state', '{"tables": ["nodes"], "touched": [["node", "c2", null, null]]}');
INSERT INTO public.changes VALUES (12, 1796628287.3570254, 'state', '{"tables": ["nodes"], "touched": [["node", "a1", null, null]]}');
INSERT INTO public.changes VALUES (13, 1796628287.3577116, 'state', '{"tables": ["nodes"], "touched": [["node", "a2", null, null]]}');
INSERT INTO public.changes VALUES (14, 1796628287.3583927, 'state', '{"tables": ["nodes"], "touched": [["node", "y1", null, null]]}');
INSERT INTO public.changes VALUES (15, 1796628287.359053, 'state', '{"tables": ["nodes"], "touched": [["node", "t1", null, null]]}');
INSERT INTO public.changes VALUES (16, 1796628287.359632, 'state', '{"tables": ["nodes"], "touched": [["node", "n1", null, null]]}');
INSERT INTO public.changes VALUES (17, 1796628287.3603292, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e1", null, null]]}');
INSERT INTO public.changes VALUES (18, 1796628287.3609457, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e2", null, null]]}');
INSERT INTO public.changes VALUES (19, 1796628287.3615072, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e3", null, null]]}');
INSERT INTO public.changes VALUES (20, 1796628287.3620265, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e4", null, null]]}');
INSERT INTO public.changes VALUES (21, 1796628287.3625429, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e5", null, null]]}');
INSERT INTO public.changes VALUES (22, 1796628287.3631248, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e6", null, null]]}');
INSERT INTO public.changes VALUES (23, 1796628287.3636196, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e7", null, null]]}');
INSERT INTO public.changes VALUES (24, 1796628287.3655765, 'state', '{"tables": ["nodes", "prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628287.3637943], ["node", "a1", null, null], ["prompt", "p1", null, null]]}');
INSERT INTO public.changes VALUES (25, 1796628287.3677952, 'state', '{"tables": ["prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628287.3667927], ["prompt", "p2", null, null]]}');
INSERT INTO public.changes VALUES (26, 1796628287.3706017, 'state', '{"tables": ["nodes", "rate_events"], "touched": [["rate", "c1", "write", 1796628287.3699155], ["node", "t1", null, null]]}');
INSERT INTO public.changes VALUES (27, 1796628287.3715172, 'state', '{"tables": ["nodes"], "touched": [["node", "n1", null, null]]}');
INSERT INTO public.changes VALUES (28, 1796628287.3726668, 'state', '{"tables": ["prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628287.37185], ["prompt", "p3", null, null]]}');
INSERT INTO public.changes VALUES (29, 1796628287.3737984, 'state', '{"tables": ["prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628287.373093], ["prompt", "p4", null, null]]}');
INSERT INTO public.changes VALUES (30, 1796628287.3748627, 'state', '{"tables": ["prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628287.3741357], ["prompt", "p5", null, null]]}');
INSERT INTO public.changes VALUES (31, 1796628287.3765588, 'state', '{"tables": ["nodes", "prompts"], "touched": [["prompt", "p3", null, null], ["node", "y1", null, null]]}');
INSERT INTO public.changes VALUES (32, 1796628287.3777304, 'state', '{"tables": ["prompts"], "touched": [["prompt", "p4", null, null]]}');
INSERT INTO public.changes VALUES (33, 1796628287.3790083, 'state', '{"tables": ["tool_calls"], "touched": [["tool_call", "tc1", null, null]]}');
INSERT INTO public.changes VALUES (34, 1796628287.3801255, 'state', '{"tables": ["tool_calls"], "touched": [["tool_call", "tc2", null, null]]}');
INSERT INTO public.changes VALUES (35, 1796628287.381218, 'state', '{"tables": ["tool_calls"], "touched": [["tool_call", "tc1", null, null]]}');
INSERT INTO public.changes VALUES (36, 1796628287.3822591, 'state', '{"tables": ["secrets"], "touched": [["secrets", null, null, null]]}');
INSERT INTO public.changes VALUES (37, 1796628287.3975086, 'state', '{"tables": ["service_tokens"], "touched": [["token", "tok_3e17585dff052aef", null, null]]}');
INSERT INTO public.consent VALUES (1, 1796628287.3454502, 'operator', 'workspace.create', '{"workspace": "w1"}', 1, NULL, NULL, '', '0000000000000000000000000000000000000000000000000000000000000000', '98cd711948d8badb6c2eb70a49388dcc9ea2d3494d4368b4c053c6b702aa7136', '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
INSERT INTO public.consent VALUES (2, 1796628287.3484743, 'operator', 'install', '{"granted": ["agents.prompt", "cards.connected", "terminals.write"], "hash": "sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170", "package": "acme.standup"}', 1, NULL, NULL, '', '98cd711948d8badb6c2eb70a49388dcc9ea2d3494d4368b4c053c6b702aa7136', 'd6de1113ff6555fdb556672a3fe42a161cf9b3ab788ddcb54537e6e261c19cae', 'b502367942121e6f7dab5c2f02e79689ccd752404881063a2bdb144840df5e1d');
INSERT INTO public.consent VALUES (3, 1796628287.3503706, 'operator', 'install', '{"granted": ["agents.prompt"], "hash": "sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b", "package": "acme.other"}', 1, NULL, NULL, '', 'd6de1113ff6555fdb556672a3fe42a161cf9b3ab788ddcb54537e6e261c19cae', 'ea217016cc047b9a9968b10c6804bfbcd3c265039d08679e94f291d2c2ddeb0b', 'bd784e0afb7d0b55e9fb827fbe13b9c7a2b3bcfc8e3bc679527807ac4dfaa374');
INSERT INTO public.consent VALUES (4, 1796628287.3514009, 'operator', 'grant', '{"package": "acme.standup", "permission": "usage.read"}', 1, NULL, NULL, '', 'ea217016cc047b9a9968b10c6804bfbcd3c265039d08679e94f291d2c2ddeb0b', '0cb6ba1793eeb7c4505b30fb9f95b223734054fc79e1de7a62b0196fef8efcdf', '21b15d765b927da441064c05d4b5339e35f41a9ec206feb389d8d51b433e6096');
INSERT INTO public.consent VALUES (5, 1796628287.3523777, 'operator', 'grant', '{"package": "acme.standup", "permission": "clipboard.write"}', 1, NULL, NULL, '', '0cb6ba1793eeb7c4505b30fb9f95b223734054fc79e1de7a62b0196fef8efcdf', '54c142c12f08792ee93d1d57e1762e6af9fe6a6c35b0b95b295e129731e51f10', '4993bbcc0712719743db5500845b3b0d4a6d150cde6a378799e70df902752909');
INSERT INTO public.consent VALUES (6, 1796628287.3533673, 'operator', 'revoke', '{"package": "acme.standup", "permission": "clipboard.write"}', 1, NULL, NULL, '', '54c142c12f08792ee93d1d57e1762e6af9fe6a6c35b0b95b295e129731e51f10', '9b4af64a00edf8846bcb5e1826bff5f2b9cd2f909f03824489f6fcf8a0960166', '2a587b5c1c3ce51edb3ebae231143603f8e9fea97dca891af6d4a1a354d79c47');
INSERT INTO public.consent VALUES (7, 1796628287.3542283, 'operator', 'revoke', '{"package": "acme.other", "permission": "agents.prompt"}', 1, NULL, NULL, '', '9b4af64a00edf8846bcb5e1826bff5f2b9cd2f909f03824489f6fcf8a0960166', 'eddd869060f6d877281f9ee0e56b9fa26015b3a8a287079338fe2f0370d94062', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (8, 1796628287.355167, 'operator', 'node.add', '{"node": "c1", "workspace": "w1"}', 1, NULL, NULL, '', 'eddd869060f6d877281f9ee0e56b9fa26015b3a8a287079338fe2f0370d94062', '493c25845f6c9310c8c57517137482a94d691beb4fa23ce30c4197c63cddb87c', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (9, 1796628287.3559864, 'operator', 'node.add', '{"node": "c2", "workspace": "w1"}', 1, NULL, NULL, '', '493c25845f6c9310c8c57517137482a94d691beb4fa23ce30c4197c63cddb87c', '2c3ecacd6517af88e8ca3a8b0158d9046de23e32818ba07eab77a4b5879fc808', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (10, 1796628287.356787, 'operator', 'node.add', '{"node": "a1", "workspace": "w1"}', 1, NULL, NULL, '', '2c3ecacd6517af88e8ca3a8b0158d9046de23e32818ba07eab77a4b5879fc808', '9323195e0f81d784c76d89931fa70831beee0295815b93653c34d8d04bb7957b', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (11, 1796628287.3575015, 'operator', 'node.add', '{"node": "a2", "workspace": "w1"}', 1, NULL, NULL, '', '9323195e0f81d784c76d89931fa70831beee0295815b93653c34d8d04bb7957b', 'b8cff66c74cf50a278d6bf332b513e17ede6ff9487b4c55aa38f5e2bc6c81be4', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (12, 1796628287.3581913, 'operator', 'node.add', '{"node": "y1", "workspace": "w1"}', 1, NULL, NULL, '', 'b8cff66c74cf50a278d6bf332b513e17ede6ff9487b4c55aa38f5e2bc6c81be4', '0efa24d650daa6f7de8932a69404f5b1b812c12b3ca2b0b588c254ab1c58405f', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (13, 1796628287.3588588, 'operator', 'node.add', '{"node": "t1", "workspace": "w1"}', 1, NULL, NULL, '', '0efa24d650daa6f7de8932a69404f5b1b812c12b3ca2b0b588c254ab1c58405f', '967c6a4d7b6f072479173873147193562a7c249ff31748196f92321eb8d7e848', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (14, 1796628287.3594563, 'operator', 'node.add', '{"node": "n1", "workspace": "w1"}', 1, NULL, NULL, '', '967c6a4d7b6f072479173873147193562a7c249ff31748196f92321eb8d7e848', 'a595042c66a1de1d2e999d02fd2860dfbe9388b1ddac24cb64cc4d6e2bb4f719', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (15, 1796628287.3601143, 'operator', 'arrow.add', '{"arrow": "e1", "from": "c1", "to": "a1"}', 1, NULL, NULL, '', 'a595042c66a1de1d2e999d02fd2860dfbe9388b1ddac24cb64cc4d6e2bb4f719', '8a790758e62725c26a91314c77d44123dc24c06791c2bda810577c57b65b48df', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (16, 1796628287.3607, 'operator', 'arrow.add', '{"arrow": "e2", "from": "c1", "to": "y1"}', 1, NULL, NULL, '', '8a790758e62725c26a91314c77d44123dc24c06791c2bda810577c57b65b48df', '7e6419e12d65f61440f805c438af83af8d6bc0877ac7d14f928a1107a49544ee', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (17, 1796628287.3613327, 'operator', 'arrow.add', '{"arrow": "e3", "from": "c1", "to": "t1"}', 1, NULL, NULL, '', '7e6419e12d65f61440f805c438af83af8d6bc0877ac7d14f928a1107a49544ee', '29e5a1bb384a655b49fb9d04a1f7fe171e3d39a7f39f88f7fe889b2bd4e4c90d', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (18, 1796628287.3618567, 'operator', 'arrow.add', '{"arrow": "e4", "from": "a1", "to": "c1"}', 1, NULL, NULL, '', '29e5a1bb384a655b49fb9d04a1f7fe171e3d39a7f39f88f7fe889b2bd4e4c90d', 'a6bd45a7f9ea389cd2de144fb27da5c8d58556f402d7d12f9931a9797365fc35', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (19, 1796628287.3623683, 'operator', 'arrow.add', '{"arrow": "e5", "from": "c2", "to": "a1"}', 1, NULL, NULL, '', 'a6bd45a7f9ea389cd2de144fb27da5c8d58556f402d7d12f9931a9797365fc35', '46f176649b6a30f7a73f48e103e6a679ed889bfed82c821263c87b7063d82c6b', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (20, 1796628287.3629365, 'operator', 'arrow.add', '{"arrow": "e6", "from": "c1", "to": "n1"}', 1, NULL, NULL, '', '46f176649b6a30f7a73f48e103e6a679ed889bfed82c821263c87b7063d82c6b', '40183d9954536cf8fd2a619d8715e148f90fa04b7a038efae0de7ade1c438080', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (21, 1796628287.3634582, 'operator', 'arrow.add', '{"arrow": "e7", "from": "c1", "to": "a2"}', 1, NULL, NULL, '', '40183d9954536cf8fd2a619d8715e148f90fa04b7a038efae0de7ade1c438080', 'c7d5fd65918866bee902ef93b9dc1d4f49b2b58c054d726b5791836222c4de55', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (22, 1796628287.3754332, 'operator', 'hold.approve', '{"package": "acme.standup", "prompt": "p3"}', 1, NULL, NULL, '', 'c7d5fd65918866bee902ef93b9dc1d4f49b2b58c054d726b5791836222c4de55', 'da2060aab0895bbe977b0e0bde1b5cea203626c326a942c4931e3cfecc66447c', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (23, 1796628287.377215, 'operator', 'hold.reject', '{"package": "acme.standup", "prompt": "p4"}', 1, NULL, NULL, '', 'da2060aab0895bbe977b0e0bde1b5cea203626c326a942c4931e3cfecc66447c', 'a2e086ea747094a474ac93dc889b3c6a7eb17ad25ce3fe5e7aed628854fdc5f6', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.consent VALUES (24, 1796628287.3820407, 'operator', 'secret.set', '{"host": "api.github.com", "secret": "gh"}', 1, NULL, NULL, '', 'a2e086ea747094a474ac93dc889b3c6a7eb17ad25ce3fe5e7aed628854fdc5f6', 'ac4281c6cf883344cbd59b8068574792e40bf3271181b6eb06ece82a72d1c166', 'a9fa27d46364b9bff6bffa0c351b0ecae03b7bbda4c9c6781dbc838b39e9e5fc');
INSERT INTO public.grants VALUES ('acme.standup', 'agents.prompt', 1796628287.353172, 'operator');
INSERT INTO public.grants VALUES ('acme.standup', 'cards.connected', 1796628287.353172, 'operator');
INSERT INTO public.grants VALUES ('acme.standup', 'terminals.write', 1796628287.353172, 'operator');
INSERT INTO public.grants VALUES ('acme.standup', 'usage.read', 1796628287.353172, 'operator');
INSERT INTO public.log VALUES (1, 1796628287.3637943, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'a1', 'hello one', '["c1", "a1"]', 'queued', NULL, NULL, NULL, 'p1', '0000000000000000000000000000000000000000000000000000000000000000', '2c04bc310313eafff1b4bfc07d5059bd2a10fbd0ec9f7100c906a0aa9c09284b', NULL, NULL);
INSERT INTO public.log VALUES (2, 1796628287.3667927, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'a1', 'hello two', '["c1", "a1"]', 'queued', NULL, NULL, NULL, 'p2', '2c04bc310313eafff1b4bfc07d5059bd2a10fbd0ec9f7100c906a0aa9c09284b', '6bd8e18a77f599815c00bab41a14a677f9fc07fb0a9caead01b0d287042986bc', NULL, NULL);
INSERT INTO public.log VALUES (3, 1796628287.3685226, 'w1', 'e5', 'c2', 'acme.other', 'sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b', 'agents.prompt', 'a1', 'revoked', NULL, 'denied', 'PERMISSION_DENIED', 'not-granted', NULL, NULL, '6bd8e18a77f599815c00bab41a14a677f9fc07fb0a9caead01b0d287042986bc', '51fb04ed1ddf2817fa0f562e0bbe2160e367d0947ae85cc932bf3f6fd6708229', NULL, NULL);
INSERT INTO public.log VALUES (4, 1796628287.3693361, 'w1', NULL, 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'clipboard.copyText', NULL, 'revoked', NULL, 'denied', 'PERMISSION_DENIED', 'not-granted', NULL, NULL, '51fb04ed1ddf2817fa0f562e0bbe2160e367d0947ae85cc932bf3f6fd6708229', '89845d285e7e59790b1dd48da9dfa7e85f8bd7b943c87a0ff137fbdc662af2f5', NULL, NULL);
INSERT INTO public.log VALUES (5, 1796628287.3704054, 'w1', 'e3', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'terminals.write', 't1', 'ls
', NULL, 'ok', NULL, NULL, NULL, NULL, '89845d285e7e59790b1dd48da9dfa7e85f8bd7b943c87a0ff137fbdc662af2f5', '3dc502828c4fbbfc277b9fa0691933b80d54edc27f182d081dbb7f7e36bbcced', NULL, NULL);
INSERT INTO public.log VALUES (6, 1796628287.3713129, 'w1', 'e6', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'cards.note.append', 'n1', ' more', NULL, 'ok', NULL, NULL, NULL, NULL, '3dc502828c4fbbfc277b9fa0691933b80d54edc27f182d081dbb7f7e36bbcced', '5a41ebbca36512a99f6aea8e0a34be5329600ea866dba7b4c10956ef02121410', NULL, NULL);
INSERT INTO public.log VALUES (7, 1796628287.37185, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 0', '["c1", "y1"]', 'held', NULL, NULL, NULL, 'p3', '5a41ebbca36512a99f6aea8e0a34be5329600ea866dba7b4c10956ef02121410', 'c2f3c495c0e83fd5dabad99825d5453bd3bd860893f69e380275524569d07de8', NULL, NULL);
INSERT INTO public.log VALUES (8, 1796628287.373093, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 1', '["c1", "y1"]', 'held', NULL, NULL, NULL, 'p4', 'c2f3c495c0e83fd5dabad99825d5453bd3bd860893f69e380275524569d07de8', '90dca919ce61ddc5ac9158597ab58610078645ff0c996672436f7891dcf769cc', NULL, NULL);
INSERT INTO public.log VALUES (9, 1796628287.3741357, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 2', '["c1", "y1"]', 'held', NULL, NULL, NULL, 'p5', '90dca919ce61ddc5ac9158597ab58610078645ff0c996672436f7891dcf769cc', 'b8d7cad6dfff3aae9441c99a2dc9c57caf8bcbbe35ca3f62ec223d39125f0c14', NULL, NULL);
INSERT INTO public.log VALUES (10, 1796628287.375792, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 0', '["c1", "y1"]', 'approved', NULL, NULL, 'operator', 'p3', 'b8d7cad6dfff3aae9441c99a2dc9c57caf8bcbbe35ca3f62ec223d39125f0c14', 'd4788a9020ee10c9cfa0edea3e3788851a5d5d606c8cb3ed6ca09782c1aded87', NULL, NULL);
INSERT INTO public.log VALUES (11, 1796628287.377561, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 1', '["c1", "y1"]', 'rejected', 'PROMPT_REJECTED', NULL, 'operator', 'p4', 'd4788a9020ee10c9cfa0edea3e3788851a5d5d606c8cb3ed6ca09782c1aded87', '0570387044a0762b666156bd5290cce4c70944932189ab43b662be66dd056c36', NULL, NULL);
INSERT INTO public.log VALUES (12, 1796628287.378525, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'tool:summarize', 'a1', '{}', '["c1", "a1", "c1"]', 'ok', NULL, NULL, NULL, 'tc1', '0570387044a0762b666156bd5290cce4c70944932189ab43b662be66dd056c36', '3f0b5f088ef65a0ce4df14b2c8cfa63e364bd7e1884959a432bcb7d820fefd41', NULL, NULL);
INSERT INTO public.log VALUES (13, 1796628287.379796, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'tool:summarize', 'a1', '{}', '["c1", "a1", "c1"]', 'ok', NULL, NULL, NULL, 'tc2', '3f0b5f088ef65a0ce4df14b2c8cfa63e364bd7e1884959a432bcb7d820fefd41', '2a92f9bd6705dbdd4f5f55615660fc7a9c88baf873f8057f459407b1b0651aa2', NULL, NULL);
INSERT INTO public.log VALUES (14, 1796628287.3808875, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'tool:summarize', 'a1', '{"ok": true}', '["c1", "a1", "c1"]', 'answered', NULL, NULL, NULL, 'tc1', '2a92f9bd6705dbdd4f5f55615660fc7a9c88baf873f8057f459407b1b0651aa2', '2992a6ee234443df63c7b1372b02d3fd062beae5fb99072e1f1f1b58f2b91963', NULL, NULL);
INSERT INTO public.nodes VALUES ('c1', 'w1', 'card', '{"background": false, "package": "acme.standup", "visible": true}', 1);
INSERT INTO public.nodes VALUES ('c2', 'w1', 'card', '{"background": false, "package": "acme.other", "visible": true}', 2);
INSERT INTO public.nodes VALUES ('a2', 'w1', 'agent', '{"dangerous": false, "name": "Quiet", "status": "waiting", "tool": ""}', 4);
INSERT INTO public.nodes VALUES ('a1', 'w1', 'agent', '{"chain": ["c1", "a1"], "dangerous": false, "name": "Builder", "screen": "> hello one\n", "status": "working", "tool": ""}', 3);
INSERT INTO public.nodes VALUES ('t1', 'w1', 'terminal', '{"name": "shell", "screen": "ls\n", "shell": "bash", "status": "waiting"}', 6);
INSERT INTO public.nodes VALUES ('n1', 'w1', 'note', '{"text": "hi\n more"}', 7);
INSERT INTO public.nodes VALUES ('y1', 'w1', 'agent', '{"chain": ["c1", "y1"], "dangerous": true, "name": "Yolo", "screen": "> rm -rf build 0\n", "status": "working", "tool": ""}', 5);
INSERT INTO public.packages VALUES ('acme.standup', 'installed', '{"name": "acme.standup", "version": "1.0.0", "permissions": {"agents.prompt": {}, "terminals.write": {}, "cards.connected": {}, "usage.read": {"optional": true}, "clipboard.write": {"optional": true}}, "tools": ["summarize"]}', '{"manifest.json": "b7df93574c1c37ab0952c73bd0fe96625d7b3cb77d7f24b076370b13af4cd53d"}', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', NULL, NULL, NULL);
INSERT INTO public.packages VALUES ('acme.other', 'installed', '{"name": "acme.other", "version": "0.1.0", "permissions": {"agents.prompt": {}}}', '{"manifest.json": "0c5782a6701078dbc7e45c6452e498af10bf62ffe3b88bf74683f8c7df3d5d6e"}', 'sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b', NULL, NULL, NULL);
INSERT INTO public.prompt_budget VALUES ('w1', 1.998874020576477, 1796628287.376118);
INSERT INTO public.prompts VALUES ('p1', 1, 'w1', 'c1', 'acme.standup', 'a1', 'e1', 'agents.prompt', 'hello one', '["c1", "a1"]', 'delivered', 1796628287.3637943, NULL, NULL, NULL, NULL, '');
INSERT INTO public.prompts VALUES ('p2', 2, 'w1', 'c1', 'acme.standup', 'a1', 'e1', 'agents.prompt', 'hello two', '["c1", "a1"]', 'queued', 1796628287.3667927, NULL, NULL, NULL, NULL, '');
INSERT INTO public.prompts VALUES ('p5', 5, 'w1', 'c1', 'acme.standup', 'y1', 'e2', 'agents.prompt', 'rm -rf build 2', '["c1", "y1"]', 'held', 1796628287.3741357, 1796628587.3741357, NULL, NULL, NULL, '');
INSERT INTO public.prompts VALUES ('p3', 3, 'w1', 'c1', 'acme.standup', 'y1', 'e2', 'agents.prompt', 'rm -rf build 0', '["c1", "y1"]', 'delivered', 1796628287.37185, 1796628587.37185, 'operator', NULL, NULL, '');
INSERT INTO public.prompts VALUES ('p4', 4, 'w1', 'c1', 'acme.standup', 'y1', 'e2', 'agents.prompt', 'rm -rf build 1', '["c1", "y1"]', 'rejected', 1796628287.373093, 1796628587.373093, 'operator', 'PROMPT_REJECTED', NULL, 'PROMPT_REJECTED: a person rejected prompt p4');
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (1, 'c1', 'prompt', 1796628287.3637943);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (2, 'c1', 'prompt', 1796628287.3667927);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (3, 'c1', 'write', 1796628287.3699155);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (4, 'c1', 'prompt', 1796628287.37185);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (5, 'c1', 'prompt', 1796628287.373093);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (6, 'c1', 'prompt', 1796628287.3741357);
INSERT INTO public.schema_migrations VALUES (0, 'm001_schema', 1796628287.3270888);
INSERT INTO public.schema_migrations VALUES (1, 'm002_changes', 1796628287.3300853);
INSERT INTO public.schema_migrations VALUES (2, 'm003_no_prompt_state_index', 1796628287.330805);
INSERT INTO public.schema_migrations VALUES (3, 'm004_suppressed_pending', 1796628287.3325038);
INSERT INTO public.schema_migrations VALUES (4, 'm005_hand_on_orphaned_spawns', 1796628287.3336225);
INSERT INTO public.schema_migrations VALUES (5, 'm006_revoke_removed_nodes_tokens', 1796628287.334656);
INSERT INTO public.schema_migrations VALUES (6, 'm007_prompts_in_play_index', 1796628287.3366718);
INSERT INTO public.schema_migrations VALUES (7, 'm008_prompt_budget', 1796628287.3380954);
INSERT INTO public.secrets VALUES ('gh', 'api.github.com', 's3cret', 1796628287.3818665);
INSERT INTO public.service_tokens VALUES ('tok_1be0ffcba6ee3230', 'c92bbb0af9c26faffa7c16075cac761a46eed8171b8de36c0d480666742118fa', 'card:c1', 1796628287.3834147, NULL);
INSERT INTO public.service_tokens VALUES ('tok_3e17585dff052aef', '3fe55d49b03c47a17b05be351b39e5bb539e43347b1984944d0e38e2bd1121a8', 'card:c1', 1796628287.3968558, 1796628287.3975086);
INSERT INTO public.tool_calls VALUES ('tc2', 2, 'w1', 'a1', 'c1', 'acme.standup', 'summarize', 'e1', '{}', '["c1", "a1", "c1"]', 'open', 1796628287.3793879, 1796628407.3793879, 'null', NULL, NULL, '', NULL);
INSERT INTO public.tool_calls VALUES ('tc1', 1, 'w1', 'a1', 'c1', 'acme.standup', 'summarize', 'e1', '{}', '["c1", "a1", "c1"]', 'answered', 1796628287.3780937, 1796628407.3780937, '{"ok": true}', NULL, NULL, '', 1796628287.380996);
INSERT INTO public.workspaces VALUES ('w1', '/tmp/tmpmx7k8ov2/project', '{"card_cap": 100, "budget": [60, 600.0], "hold_timeout": 300.0, "hop_limit": 3, "reserved_ports": [], "secret_denylist": true, "fetch_timeout": 30.0, "fetch_max_bytes": 5000000, "max_payload": 262144, "denial_log_limit": 120, "fs_max_bytes": 16777216, "tool_timeout": 120.0}');
SELECT pg_catalog.setval('public.rate_events_id_seq', 6, true);
ALTER TABLE ONLY public.arrows
    ADD CONSTRAINT arrows_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.changes
    ADD CONSTRAINT changes_pkey PRIMARY KEY (seq);
ALTER TABLE ONLY public.consent
    ADD CONSTRAINT consent_pkey PRIMARY KEY (seq);
ALTER TABLE ONLY public.grants
    ADD CONSTRAINT grants_pkey PRIMARY KEY (package, permission);
ALTER TABLE ONLY public.log
    ADD CONSTRAINT log_pkey PRIMARY KEY (seq);
ALTER TABLE ONLY public.meta
    ADD CONSTRAINT meta_pkey PRIMARY KEY (key);
ALTER TABLE ONLY public.nodes
    ADD CONSTRAINT nodes_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.packages
    ADD CONSTRAINT packages_pkey PRIMARY KEY (name);
ALTER TABLE ONLY public.prompt_budget
    ADD CONSTRAINT prompt_budget_pkey PRIMARY KEY (workspace);
ALTER TABLE ONLY public.prompts
    ADD CONSTRAINT prompts_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.rate_events
    ADD CONSTRAINT rate_events_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_name_key UNIQUE (name);
ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY ("position");
ALTER TABLE ONLY public.secrets
    ADD CONSTRAINT secrets_pkey PRIMARY KEY (name);
ALTER TABLE ONLY public.service_tokens
    ADD CONSTRAINT service_tokens_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.suppressed_pending
    ADD CONSTRAINT suppressed_pending_pkey PRIMARY KEY (key);
ALTER TABLE ONLY public.tool_calls
    ADD CONSTRAINT tool_calls_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.usage
    ADD CONSTRAINT usage_pkey PRIMARY KEY (workspace);
ALTER TABLE ONLY public.workspaces
    ADD CONSTRAINT workspaces_pkey PRIMARY KEY (id);
CREATE INDEX idx_arrows_workspace ON public.arrows USING btree (workspace);
CREATE INDEX idx_log_arrow_seq ON public.log USING btree (arrow, seq);
CREATE INDEX idx_log_card_seq ON public.log USING btree (card, seq);
CREATE INDEX idx_nodes_position ON public.nodes USING btree ("position");
CREATE INDEX idx_nodes_workspace ON public.nodes USING btree (workspace);
CREATE INDEX idx_prompts_in_play ON public.prompts USING btree ("position") WHERE ((state = 'delivered'::text) OR (state = 'held'::text) OR (state = 'queued'::text));
CREATE INDEX idx_prompts_position ON public.prompts USING btree ("position");
CREATE INDEX idx_rate_events_window ON public.rate_events USING btree (card, key, t);
CREATE UNIQUE INDEX idx_service_tokens_hash ON public.service_tokens USING btree (hash);
CREATE INDEX idx_tool_calls_position ON public.tool_calls USING btree ("position");
CREATE INDEX idx_tool_calls_state ON public.tool_calls USING btree (state);
