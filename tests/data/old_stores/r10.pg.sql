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
INSERT INTO public.changes VALUES (1, 1796628285.3719192, 'state', '{"tables": ["workspaces"], "touched": [["workspace", "w1", null, null]]}');
INSERT INTO public.changes VALUES (2, 1796628285.3759246, 'state', '{"tables": ["packages"], "touched": [["package", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (3, 1796628285.3854444, 'state', '{"tables": ["grants", "packages"], "touched": [["package", "acme.standup", null, null], ["grants", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (4, 1796628285.3872657, 'state', '{"tables": ["packages"], "touched": [["package", "acme.other", null, null]]}');
INSERT INTO public.changes VALUES (5, 1796628285.3893557, 'state', '{"tables": ["grants", "packages"], "touched": [["package", "acme.other", null, null], ["grants", "acme.other", null, null]]}');
INSERT INTO public.changes VALUES (6, 1796628285.3915253, 'state', '{"tables": ["grants"], "touched": [["grants", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (7, 1796628285.3931854, 'state', '{"tables": ["grants"], "touched": [["grants", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (8, 1796628285.394792, 'state', '{"tables": ["grants"], "touched": [["grants", "acme.standup", null, null]]}');
INSERT INTO public.changes VALUES (9, 1796628285.3991244, 'state', '{"tables": ["grants"], "touched": [["grants", "acme.other", null, null]]}');
INSERT INTO public.changes VALUES (10, 1796628285.405915, 'state', '{"tables": ["nodes"], "touched": [["node", "c1", null, null]]}');
INSERT INTO public.changes VALUES (11, 1796628285.4094234, 'state', '{"tables": ["nodes"], "touched": [["node", "c2", null, null]]}');
INSERT INTO public.changes VALUES (12, 1796628285.4107788, 'state', '{"tables": ["nodes"], "touched": [["node", "a1", null, null]]}');
INSERT INTO public.changes VALUES (13, 1796628285.4164662, 'state', '{"tables": ["nodes"], "touched": [["node", "a2", null, null]]}');
INSERT INTO public.changes VALUES (14, 1796628285.4177167, 'state', '{"tables": ["nodes"], "touched": [["node", "y1", null, null]]}');
INSERT INTO public.changes VALUES (15, 1796628285.418928, 'state', '{"tables": ["nodes"], "touched": [["node", "t1", null, null]]}');
INSERT INTO public.changes VALUES (16, 1796628285.420487, 'state', '{"tables": ["nodes"], "touched": [["node", "n1", null, null]]}');
INSERT INTO public.changes VALUES (17, 1796628285.4217138, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e1", null, null]]}');
INSERT INTO public.changes VALUES (18, 1796628285.4245615, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e2", null, null]]}');
INSERT INTO public.changes VALUES (19, 1796628285.4273126, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e3", null, null]]}');
INSERT INTO public.changes VALUES (20, 1796628285.4311867, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e4", null, null]]}');
INSERT INTO public.changes VALUES (21, 1796628285.4331014, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e5", null, null]]}');
INSERT INTO public.changes VALUES (22, 1796628285.4346993, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e6", null, null]]}');
INSERT INTO public.changes VALUES (23, 1796628285.438275, 'state', '{"tables": ["arrows"], "touched": [["arrow", "e7", null, null]]}');
INSERT INTO public.changes VALUES (24, 1796628285.4421713, 'state', '{"tables": ["nodes", "prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628285.4395223], ["node", "a1", null, null], ["prompt", "p1", null, null]]}');
INSERT INTO public.changes VALUES (25, 1796628285.4530308, 'state', '{"tables": ["prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628285.449742], ["prompt", "p2", null, null]]}');
INSERT INTO public.changes VALUES (26, 1796628285.4601474, 'state', '{"tables": ["nodes", "rate_events"], "touched": [["rate", "c1", "write", 1796628285.4549925], ["node", "t1", null, null]]}');
INSERT INTO public.changes VALUES (27, 1796628285.4650688, 'state', '{"tables": ["nodes"], "touched": [["node", "n1", null, null]]}');
INSERT INTO public.changes VALUES (28, 1796628285.4663794, 'state', '{"tables": ["prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628285.4655054], ["prompt", "p3", null, null]]}');
INSERT INTO public.changes VALUES (29, 1796628285.4674752, 'state', '{"tables": ["prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628285.466792], ["prompt", "p4", null, null]]}');
INSERT INTO public.changes VALUES (30, 1796628285.4685407, 'state', '{"tables": ["prompts", "rate_events"], "touched": [["rate", "c1", "prompt", 1796628285.4678562], ["prompt", "p5", null, null]]}');
INSERT INTO public.changes VALUES (31, 1796628285.4723418, 'state', '{"tables": ["nodes", "prompts"], "touched": [["prompt", "p3", null, null], ["node", "y1", null, null]]}');
INSERT INTO public.changes VALUES (32, 1796628285.4735177, 'state', '{"tables": ["prompts"], "touched": [["prompt", "p4", null, null]]}');
INSERT INTO public.changes VALUES (33, 1796628285.475304, 'state', '{"tables": ["tool_calls"], "touched": [["tool_call", "tc1", null, null]]}');
INSERT INTO public.changes VALUES (34, 1796628285.4781113, 'state', '{"tables": ["tool_calls"], "touched": [["tool_call", "tc2", null, null]]}');
INSERT INTO public.changes VALUES (35, 1796628285.479127, 'state', '{"tables": ["tool_calls"], "touched": [["tool_call", "tc1", null, null]]}');
INSERT INTO public.changes VALUES (36, 1796628285.4809406, 'state', '{"tables": ["secrets"], "touched": [["secrets", null, null, null]]}');
INSERT INTO public.consent VALUES (1, 1796628285.3702428, 'operator', 'workspace.create', '{"workspace": "w1"}', 1, NULL, NULL, '', '0000000000000000000000000000000000000000000000000000000000000000', 'f66d41f604e54dd988801ac7f1d7586c0850ba59c956ade16df098984ed3979e', '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
INSERT INTO public.consent VALUES (2, 1796628285.384678, 'operator', 'install', '{"granted": ["agents.prompt", "cards.connected", "terminals.write"], "hash": "sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170", "package": "acme.standup"}', 1, NULL, NULL, '', 'f66d41f604e54dd988801ac7f1d7586c0850ba59c956ade16df098984ed3979e', '83ecf28b02b38071ea652bd476b687e80d34d6a323fd7c135c0be5e55d9b8fbd', 'add00a931d4a2c4177bfb8571bc56711288f991080f523152c7a2318aff5a3e7');
INSERT INTO public.consent VALUES (3, 1796628285.3888474, 'operator', 'install', '{"granted": ["agents.prompt"], "hash": "sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b", "package": "acme.other"}', 1, NULL, NULL, '', '83ecf28b02b38071ea652bd476b687e80d34d6a323fd7c135c0be5e55d9b8fbd', '863b7e6d43c12da222f7ea99d5a4557bd95ce7e39451dfe048872d4d71c2cd00', '9dc63a97e8e5098c99f334540b31b90fb27a0ea163dc9a43aacdb7fd55968d1e');
INSERT INTO public.consent VALUES (4, 1796628285.390657, 'operator', 'grant', '{"package": "acme.standup", "permission": "usage.read"}', 1, NULL, NULL, '', '863b7e6d43c12da222f7ea99d5a4557bd95ce7e39451dfe048872d4d71c2cd00', 'c04252b2ac9e38f62141e9df2d467f6f8d4c6c1cb2e09727cc056ba0eb8be218', 'c2d682d398f1cc4c0c7c0776b014e9220b18f9927ef7268eb04608fad8603b56');
INSERT INTO public.consent VALUES (5, 1796628285.392694, 'operator', 'grant', '{"package": "acme.standup", "permission": "clipboard.write"}', 1, NULL, NULL, '', 'c04252b2ac9e38f62141e9df2d467f6f8d4c6c1cb2e09727cc056ba0eb8be218', 'ca7ac3ede3ab37d2db0d6d529a579587ddd763c10a4391f019714b8c47802001', '870635f550006a05b783caf36fab06b43ab7f0dd3dc1747884b4ab9d7d0c52b1');
INSERT INTO public.consent VALUES (6, 1796628285.3940926, 'operator', 'revoke', '{"package": "acme.standup", "permission": "clipboard.write"}', 1, NULL, NULL, '', 'ca7ac3ede3ab37d2db0d6d529a579587ddd763c10a4391f019714b8c47802001', '7e5486d0e18f0bf9ed0c04db6fe81495a745e61fc9d621e2a91e9b4d30a103a8', 'e86f08ba8bc7b8042359a4d83b94f1c8e66f62dafa56e99b1354fb4e42f07c5e');
INSERT INTO public.consent VALUES (7, 1796628285.397241, 'operator', 'revoke', '{"package": "acme.other", "permission": "agents.prompt"}', 1, NULL, NULL, '', '7e5486d0e18f0bf9ed0c04db6fe81495a745e61fc9d621e2a91e9b4d30a103a8', '8ded1731a2d1a769c8c8418bded5911064a274602be3661793d0b999a6544ea2', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (8, 1796628285.4053247, 'operator', 'node.add', '{"node": "c1", "workspace": "w1"}', 1, NULL, NULL, '', '8ded1731a2d1a769c8c8418bded5911064a274602be3661793d0b999a6544ea2', '79d07edc98d43960dcf5bb53e8c1d3f29e98ea1a00e1019bd04f74a97341855a', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (9, 1796628285.4068244, 'operator', 'node.add', '{"node": "c2", "workspace": "w1"}', 1, NULL, NULL, '', '79d07edc98d43960dcf5bb53e8c1d3f29e98ea1a00e1019bd04f74a97341855a', 'e25c29859327d31b35db09fd57998625fa6e4f44a3484a1fe9553c19302d54d8', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (10, 1796628285.4103963, 'operator', 'node.add', '{"node": "a1", "workspace": "w1"}', 1, NULL, NULL, '', 'e25c29859327d31b35db09fd57998625fa6e4f44a3484a1fe9553c19302d54d8', 'ea23f05e7ea409bfa78762c36052c0d6dbff520b168bcdcfc12b936c4796cb88', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (11, 1796628285.4117115, 'operator', 'node.add', '{"node": "a2", "workspace": "w1"}', 1, NULL, NULL, '', 'ea23f05e7ea409bfa78762c36052c0d6dbff520b168bcdcfc12b936c4796cb88', 'c3af3cac61ad7e8fa9a59ff794b782aba32b5d1fabfd5b00b4310426a00b1440', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (12, 1796628285.4173808, 'operator', 'node.add', '{"node": "y1", "workspace": "w1"}', 1, NULL, NULL, '', 'c3af3cac61ad7e8fa9a59ff794b782aba32b5d1fabfd5b00b4310426a00b1440', '7fa67078cc0b18a5d12cff0fc26684570bdc870c219b0570257ecfac41cda5f1', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (13, 1796628285.418525, 'operator', 'node.add', '{"node": "t1", "workspace": "w1"}', 1, NULL, NULL, '', '7fa67078cc0b18a5d12cff0fc26684570bdc870c219b0570257ecfac41cda5f1', 'a68a98087e1a2905d9648261247262a84ff23643e20e5461fd1de0be560a620c', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (14, 1796628285.4197168, 'operator', 'node.add', '{"node": "n1", "workspace": "w1"}', 1, NULL, NULL, '', 'a68a98087e1a2905d9648261247262a84ff23643e20e5461fd1de0be560a620c', '0a299378e82f7561d01a18fdd506c525b641738907e127a5213bebe7ae1b2d21', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (15, 1796628285.4213772, 'operator', 'arrow.add', '{"arrow": "e1", "from": "c1", "to": "a1"}', 1, NULL, NULL, '', '0a299378e82f7561d01a18fdd506c525b641738907e127a5213bebe7ae1b2d21', 'e35a6836e8b5eab5a7df34a43415936848a98cb3d392652db3bc7306c41f468f', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (16, 1796628285.422429, 'operator', 'arrow.add', '{"arrow": "e2", "from": "c1", "to": "y1"}', 1, NULL, NULL, '', 'e35a6836e8b5eab5a7df34a43415936848a98cb3d392652db3bc7306c41f468f', 'bb2a6787a18425ac396daff56501d7c61c84040e7eff60eeea55db1fec037570', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (17, 1796628285.426234, 'operator', 'arrow.add', '{"arrow": "e3", "from": "c1", "to": "t1"}', 1, NULL, NULL, '', 'bb2a6787a18425ac396daff56501d7c61c84040e7eff60eeea55db1fec037570', 'd2647417e2dd8c2510562303e5a43400345ba14a51f4578b6e4ca9bc09b5e3fe', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (18, 1796628285.42861, 'operator', 'arrow.add', '{"arrow": "e4", "from": "a1", "to": "c1"}', 1, NULL, NULL, '', 'd2647417e2dd8c2510562303e5a43400345ba14a51f4578b6e4ca9bc09b5e3fe', '41fa69e1a7624c2f99e63a22fe542e136518f12fb18846de13153f95648b9fef', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (19, 1796628285.4326515, 'operator', 'arrow.add', '{"arrow": "e5", "from": "c2", "to": "a1"}', 1, NULL, NULL, '', '41fa69e1a7624c2f99e63a22fe542e136518f12fb18846de13153f95648b9fef', '411305229a46077537727dc0e31e28f99669a7914810d9049eb12f9e252259cd', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (20, 1796628285.4341428, 'operator', 'arrow.add', '{"arrow": "e6", "from": "c1", "to": "n1"}', 1, NULL, NULL, '', '411305229a46077537727dc0e31e28f99669a7914810d9049eb12f9e252259cd', '4048a6730e6be62468448d6d9548b1894f7695a53173a61d75d43a236232a455', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (21, 1796628285.437665, 'operator', 'arrow.add', '{"arrow": "e7", "from": "c1", "to": "a2"}', 1, NULL, NULL, '', '4048a6730e6be62468448d6d9548b1894f7695a53173a61d75d43a236232a455', '5161bac01410887ccfa3c59baa9f0d2c90eb7d5e9310ea240a5adcae102a4c79', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (22, 1796628285.4691892, 'operator', 'hold.approve', '{"package": "acme.standup", "prompt": "p3"}', 1, NULL, NULL, '', '5161bac01410887ccfa3c59baa9f0d2c90eb7d5e9310ea240a5adcae102a4c79', '6c14dba76d840099a966fb09922b41882f13f01a31857c85cc6d1a86d9331df0', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (23, 1796628285.473075, 'operator', 'hold.reject', '{"package": "acme.standup", "prompt": "p4"}', 1, NULL, NULL, '', '6c14dba76d840099a966fb09922b41882f13f01a31857c85cc6d1a86d9331df0', 'f7031a657349fb55c9d6da075a2d44788f3b6eb3b564c0bc2fac44f454e229d5', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.consent VALUES (24, 1796628285.4804432, 'operator', 'secret.set', '{"host": "api.github.com", "secret": "gh"}', 1, NULL, NULL, '', 'f7031a657349fb55c9d6da075a2d44788f3b6eb3b564c0bc2fac44f454e229d5', 'b51cf3360695fe576952ce5b1546ff9496313a46ea4065e9e1ea07d0f451ce76', 'cd4388edf6195ec57fd30e35a24c1b2feced44bc63b8b81b7f68f0ca9884cad0');
INSERT INTO public.grants VALUES ('acme.standup', 'agents.prompt', 1796628285.3938615, 'operator');
INSERT INTO public.grants VALUES ('acme.standup', 'cards.connected', 1796628285.3938615, 'operator');
INSERT INTO public.grants VALUES ('acme.standup', 'terminals.write', 1796628285.3938615, 'operator');
INSERT INTO public.grants VALUES ('acme.standup', 'usage.read', 1796628285.3938615, 'operator');
INSERT INTO public.log VALUES (1, 1796628285.4395223, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'a1', 'hello one', '["c1", "a1"]', 'queued', NULL, NULL, NULL, 'p1', '0000000000000000000000000000000000000000000000000000000000000000', '7ed2302ba43abf72ceccd6204d21f64115823864876856ccb66cfbc50688279a', NULL, NULL);
INSERT INTO public.log VALUES (2, 1796628285.449742, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'a1', 'hello two', '["c1", "a1"]', 'queued', NULL, NULL, NULL, 'p2', '7ed2302ba43abf72ceccd6204d21f64115823864876856ccb66cfbc50688279a', 'd9d90b598a796584e535e7bb0c5f937f158732188c5cc4406a9fe94f04a3b5a7', NULL, NULL);
INSERT INTO public.log VALUES (3, 1796628285.4535623, 'w1', 'e5', 'c2', 'acme.other', 'sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b', 'agents.prompt', 'a1', 'revoked', NULL, 'denied', 'PERMISSION_DENIED', 'not-granted', NULL, NULL, 'd9d90b598a796584e535e7bb0c5f937f158732188c5cc4406a9fe94f04a3b5a7', '452cbb8d4ed9b2729685d5662155d6d0f8a7931d55a3fc3da3d6242ccfdfc7ef', NULL, NULL);
INSERT INTO public.log VALUES (4, 1796628285.4544024, 'w1', NULL, 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'clipboard.copyText', NULL, 'revoked', NULL, 'denied', 'PERMISSION_DENIED', 'not-granted', NULL, NULL, '452cbb8d4ed9b2729685d5662155d6d0f8a7931d55a3fc3da3d6242ccfdfc7ef', '7c445a375ab59b34c7b4106e9a4f5bb81e35b2b4559c804e4602d2a6e755e1b5', NULL, NULL);
INSERT INTO public.log VALUES (5, 1796628285.4597814, 'w1', 'e3', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'terminals.write', 't1', 'ls
', NULL, 'ok', NULL, NULL, NULL, NULL, '7c445a375ab59b34c7b4106e9a4f5bb81e35b2b4559c804e4602d2a6e755e1b5', '349e963c2a2ee9fb6676ec3d9cc85f2fe659008c79d08deca8ac591acd12156c', NULL, NULL);
INSERT INTO public.log VALUES (6, 1796628285.4611163, 'w1', 'e6', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'cards.note.append', 'n1', ' more', NULL, 'ok', NULL, NULL, NULL, NULL, '349e963c2a2ee9fb6676ec3d9cc85f2fe659008c79d08deca8ac591acd12156c', 'f00ce4af127b2aa5f9898ce84b9cf6d10644243b838ff77fe8ad8d9a722cc257', NULL, NULL);
INSERT INTO public.log VALUES (7, 1796628285.4655054, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 0', '["c1", "y1"]', 'held', NULL, NULL, NULL, 'p3', 'f00ce4af127b2aa5f9898ce84b9cf6d10644243b838ff77fe8ad8d9a722cc257', '256c5ffb85f365deb16888a93f0640e7ae6b36d4de4e7ccf059507cfef604994', NULL, NULL);
INSERT INTO public.log VALUES (8, 1796628285.466792, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 1', '["c1", "y1"]', 'held', NULL, NULL, NULL, 'p4', '256c5ffb85f365deb16888a93f0640e7ae6b36d4de4e7ccf059507cfef604994', '126296f4db123c217e592737b2a0ea36fa38ce0235350a68b6e9768e773b6332', NULL, NULL);
INSERT INTO public.log VALUES (9, 1796628285.4678562, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 2', '["c1", "y1"]', 'held', NULL, NULL, NULL, 'p5', '126296f4db123c217e592737b2a0ea36fa38ce0235350a68b6e9768e773b6332', '0a691a4a76ddfeb0804bf8a529b317286c8facec3ab1bf89796db6628b616712', NULL, NULL);
INSERT INTO public.log VALUES (10, 1796628285.4697776, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 0', '["c1", "y1"]', 'approved', NULL, NULL, 'operator', 'p3', '0a691a4a76ddfeb0804bf8a529b317286c8facec3ab1bf89796db6628b616712', '3272a2b01911d98b0633a06a1a8d79004bef4cb062e0600bb6311db7970c72bc', NULL, NULL);
INSERT INTO public.log VALUES (11, 1796628285.4733603, 'w1', 'e2', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'agents.prompt', 'y1', 'rm -rf build 1', '["c1", "y1"]', 'rejected', 'PROMPT_REJECTED', NULL, 'operator', 'p4', '3272a2b01911d98b0633a06a1a8d79004bef4cb062e0600bb6311db7970c72bc', '84eb5ad443e9b9e91e39fc8c8ce8d075087035bd4f1de89c44f6ba3ca0143739', NULL, NULL);
INSERT INTO public.log VALUES (12, 1796628285.4747112, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'tool:summarize', 'a1', '{}', '["c1", "a1", "c1"]', 'ok', NULL, NULL, NULL, 'tc1', '84eb5ad443e9b9e91e39fc8c8ce8d075087035bd4f1de89c44f6ba3ca0143739', 'f2070ace9e3e43cfa437b45a3765837bc4d91d2b5f6877ec4186b2cd2196bfff', NULL, NULL);
INSERT INTO public.log VALUES (13, 1796628285.4777977, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'tool:summarize', 'a1', '{}', '["c1", "a1", "c1"]', 'ok', NULL, NULL, NULL, 'tc2', 'f2070ace9e3e43cfa437b45a3765837bc4d91d2b5f6877ec4186b2cd2196bfff', '7af7497543b98908cc004d17d17a79c38ec65fe266f0b9ef17dab489e41acc38', NULL, NULL);
INSERT INTO public.log VALUES (14, 1796628285.4788103, 'w1', 'e1', 'c1', 'acme.standup', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', 'tool:summarize', 'a1', '{"ok": true}', '["c1", "a1", "c1"]', 'answered', NULL, NULL, NULL, 'tc1', '7af7497543b98908cc004d17d17a79c38ec65fe266f0b9ef17dab489e41acc38', 'f23b4381ed5ab8437ce0a74529f1854348a4ee12bef86bff6f59fec1b8641e2e', NULL, NULL);
INSERT INTO public.nodes VALUES ('c1', 'w1', 'card', '{"background": false, "package": "acme.standup", "visible": true}', 1);
INSERT INTO public.nodes VALUES ('c2', 'w1', 'card', '{"background": false, "package": "acme.other", "visible": true}', 2);
INSERT INTO public.nodes VALUES ('a2', 'w1', 'agent', '{"dangerous": false, "name": "Quiet", "status": "waiting", "tool": ""}', 4);
INSERT INTO public.nodes VALUES ('a1', 'w1', 'agent', '{"chain": ["c1", "a1"], "dangerous": false, "name": "Builder", "screen": "> hello one\n", "status": "working", "tool": ""}', 3);
INSERT INTO public.nodes VALUES ('t1', 'w1', 'terminal', '{"name": "shell", "screen": "ls\n", "shell": "bash", "status": "waiting"}', 6);
INSERT INTO public.nodes VALUES ('n1', 'w1', 'note', '{"text": "hi\n more"}', 7);
INSERT INTO public.nodes VALUES ('y1', 'w1', 'agent', '{"chain": ["c1", "y1"], "dangerous": true, "name": "Yolo", "screen": "> rm -rf build 0\n", "status": "working", "tool": ""}', 5);
INSERT INTO public.packages VALUES ('acme.standup', 'installed', '{"name": "acme.standup", "version": "1.0.0", "permissions": {"agents.prompt": {}, "terminals.write": {}, "cards.connected": {}, "usage.read": {"optional": true}, "clipboard.write": {"optional": true}}, "tools": ["summarize"]}', '{"manifest.json": "b7df93574c1c37ab0952c73bd0fe96625d7b3cb77d7f24b076370b13af4cd53d"}', 'sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170', NULL, NULL, NULL);
INSERT INTO public.packages VALUES ('acme.other', 'installed', '{"name": "acme.other", "version": "0.1.0", "permissions": {"agents.prompt": {}}}', '{"manifest.json": "0c5782a6701078dbc7e45c6452e498af10bf62ffe3b88bf74683f8c7df3d5d6e"}', 'sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b', NULL, NULL, NULL);
INSERT INTO public.prompts VALUES ('p1', 1, 'w1', 'c1', 'acme.standup', 'a1', 'e1', 'agents.prompt', 'hello one', '["c1", "a1"]', 'delivered', 1796628285.4395223, NULL, NULL, NULL, NULL, '');
INSERT INTO public.prompts VALUES ('p2', 2, 'w1', 'c1', 'acme.standup', 'a1', 'e1', 'agents.prompt', 'hello two', '["c1", "a1"]', 'queued', 1796628285.449742, NULL, NULL, NULL, NULL, '');
INSERT INTO public.prompts VALUES ('p5', 5, 'w1', 'c1', 'acme.standup', 'y1', 'e2', 'agents.prompt', 'rm -rf build 2', '["c1", "y1"]', 'held', 1796628285.4678562, 1796628585.4678562, NULL, NULL, NULL, '');
INSERT INTO public.prompts VALUES ('p3', 3, 'w1', 'c1', 'acme.standup', 'y1', 'e2', 'agents.prompt', 'rm -rf build 0', '["c1", "y1"]', 'delivered', 1796628285.4655054, 1796628585.4655054, 'operator', NULL, NULL, '');
INSERT INTO public.prompts VALUES ('p4', 4, 'w1', 'c1', 'acme.standup', 'y1', 'e2', 'agents.prompt', 'rm -rf build 1', '["c1", "y1"]', 'rejected', 1796628285.466792, 1796628585.466792, 'operator', 'PROMPT_REJECTED', NULL, 'PROMPT_REJECTED: a person rejected prompt p4');
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (1, 'c1', 'prompt', 1796628285.4395223);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (2, 'c1', 'prompt', 1796628285.449742);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (3, 'c1', 'write', 1796628285.4549925);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (4, 'c1', 'prompt', 1796628285.4655054);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (5, 'c1', 'prompt', 1796628285.466792);
INSERT INTO public.rate_events OVERRIDING SYSTEM VALUE VALUES (6, 'c1', 'prompt', 1796628285.4678562);
INSERT INTO public.schema_migrations VALUES (0, 'm001_schema', 1796628285.3625803);
INSERT INTO public.schema_migrations VALUES (1, 'm002_changes', 1796628285.363592);
INSERT INTO public.schema_migrations VALUES (2, 'm003_no_prompt_state_index', 1796628285.3640149);
INSERT INTO public.secrets VALUES ('gh', 'api.github.com', 's3cret', 1796628285.4802387);
INSERT INTO public.service_tokens VALUES ('tok_ad2f23fbd1b20edc', '2a323e94f3972e6c8dc00d3766eab76c9103022e69cb53089c2e469a322ac8e4', 'card:c1', 1796628285.483605, NULL);
INSERT INTO public.service_tokens VALUES ('tok_2a8613ee4fba0b8f', '23011a08a4e28569ed29666a22f0a3c630bb1aee524ca10e86a91566a847d8b6', 'card:c1', 1796628285.4875462, 1796628285.487709);
INSERT INTO public.tool_calls VALUES ('tc2', 2, 'w1', 'a1', 'c1', 'acme.standup', 'summarize', 'e1', '{}', '["c1", "a1", "c1"]', 'open', 1796628285.477489, 1796628405.477489, 'null', NULL, NULL, '', NULL);
INSERT INTO public.tool_calls VALUES ('tc1', 1, 'w1', 'a1', 'c1', 'acme.standup', 'summarize', 'e1', '{}', '["c1", "a1", "c1"]', 'answered', 1796628285.4740305, 1796628405.4740305, '{"ok": true}', NULL, NULL, '', 1796628285.47892);
INSERT INTO public.workspaces VALUES ('w1', '/tmp/tmptd62cshc/project', '{"card_cap": 100, "budget": [60, 600.0], "hold_timeout": 300.0, "hop_limit": 3, "reserved_ports": [], "secret_denylist": true, "fetch_timeout": 30.0, "fetch_max_bytes": 5000000, "max_payload": 262144, "denial_log_limit": 120, "fs_max_bytes": 16777216, "tool_timeout": 120.0}');
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
CREATE INDEX idx_prompts_position ON public.prompts USING btree ("position");
CREATE INDEX idx_rate_events_window ON public.rate_events USING btree (card, key, t);
CREATE UNIQUE INDEX idx_service_tokens_hash ON public.service_tokens USING btree (hash);
CREATE INDEX idx_tool_calls_position ON public.tool_calls USING btree ("position");
CREATE INDEX idx_tool_calls_state ON public.tool_calls USING btree (state);
