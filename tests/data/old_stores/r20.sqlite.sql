BEGIN TRANSACTION;
CREATE TABLE [_sqlite_migrations] ([id] INTEGER PRIMARY KEY, [migration_set] TEXT, [name] TEXT, [applied_at] TEXT);
INSERT INTO "_sqlite_migrations" VALUES(1,'arrowgate','m001_engine','2026-12-07 07:24:46.846415+00:00');
INSERT INTO "_sqlite_migrations" VALUES(2,'arrowgate','m002_secrets','2026-12-07 07:24:46.846547+00:00');
INSERT INTO "_sqlite_migrations" VALUES(3,'arrowgate','m003_prompt_position','2026-12-07 07:24:46.846594+00:00');
INSERT INTO "_sqlite_migrations" VALUES(4,'arrowgate','m004_consent_chain','2026-12-07 07:24:46.846876+00:00');
INSERT INTO "_sqlite_migrations" VALUES(5,'arrowgate','m005_log_payload_digest','2026-12-07 07:24:46.847016+00:00');
INSERT INTO "_sqlite_migrations" VALUES(6,'arrowgate','m006_service_tokens','2026-12-07 07:24:46.847147+00:00');
INSERT INTO "_sqlite_migrations" VALUES(7,'arrowgate','m007_tool_calls','2026-12-07 07:24:46.847322+00:00');
INSERT INTO "_sqlite_migrations" VALUES(8,'arrowgate','m008_canvas','2026-12-07 07:24:46.847795+00:00');
INSERT INTO "_sqlite_migrations" VALUES(9,'arrowgate','m009_node_position_index','2026-12-07 07:24:46.847837+00:00');
INSERT INTO "_sqlite_migrations" VALUES(10,'arrowgate','m010_changes','2026-12-07 07:24:46.848534+00:00');
INSERT INTO "_sqlite_migrations" VALUES(11,'arrowgate','m011_changes_pruned_at_commit','2026-12-07 07:24:46.848558+00:00');
INSERT INTO "_sqlite_migrations" VALUES(12,'arrowgate','m012_no_prompt_state_index','2026-12-07 07:24:46.848586+00:00');
INSERT INTO "_sqlite_migrations" VALUES(13,'arrowgate','m013_log_keys','2026-12-07 07:24:46.860930+00:00');
INSERT INTO "_sqlite_migrations" VALUES(14,'arrowgate','m014_suppressed_pending','2026-12-07 07:24:46.861052+00:00');
INSERT INTO "_sqlite_migrations" VALUES(15,'arrowgate','m015_hand_on_orphaned_spawns','2026-12-07 07:24:46.861143+00:00');
INSERT INTO "_sqlite_migrations" VALUES(16,'arrowgate','m016_revoke_removed_nodes_tokens','2026-12-07 07:24:46.861199+00:00');
INSERT INTO "_sqlite_migrations" VALUES(17,'arrowgate','m017_suppressed_pending_fed','2026-12-07 07:24:46.861248+00:00');
INSERT INTO "_sqlite_migrations" VALUES(18,'arrowgate','m018_service_tokens_fed','2026-12-07 07:24:46.861306+00:00');
INSERT INTO "_sqlite_migrations" VALUES(19,'arrowgate','m019_prompts_in_play_index','2026-12-07 07:24:46.861374+00:00');
INSERT INTO "_sqlite_migrations" VALUES(20,'arrowgate','m020_prompt_budget','2026-12-07 07:24:46.861416+00:00');
CREATE TABLE "arrows" (
   "id" TEXT PRIMARY KEY,
   "workspace" TEXT,
   "src" TEXT,
   "dst" TEXT,
   "from_port" TEXT,
   "to_port" TEXT
);
INSERT INTO "arrows" VALUES('e1','w1','c1','a1',NULL,NULL);
INSERT INTO "arrows" VALUES('e2','w1','c1','y1',NULL,NULL);
INSERT INTO "arrows" VALUES('e3','w1','c1','t1',NULL,NULL);
INSERT INTO "arrows" VALUES('e4','w1','a1','c1',NULL,NULL);
INSERT INTO "arrows" VALUES('e5','w1','c2','a1',NULL,NULL);
INSERT INTO "arrows" VALUES('e6','w1','c1','n1',NULL,NULL);
INSERT INTO "arrows" VALUES('e7','w1','c1','a2',NULL,NULL);
CREATE TABLE changes (seq integer primary key, kind text not null, key text, key2 text, t real);
INSERT INTO "changes" VALUES(1,'workspace','w1',NULL,NULL);
INSERT INTO "changes" VALUES(2,'package','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(3,'package','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(4,'package','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(5,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(6,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(7,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(8,'package','acme.other',NULL,NULL);
INSERT INTO "changes" VALUES(9,'package','acme.other',NULL,NULL);
INSERT INTO "changes" VALUES(10,'package','acme.other',NULL,NULL);
INSERT INTO "changes" VALUES(11,'grants','acme.other',NULL,NULL);
INSERT INTO "changes" VALUES(12,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(13,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(14,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(15,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(16,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(17,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(18,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(19,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(20,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(21,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(22,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(23,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(24,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(25,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(26,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(27,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(28,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(29,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(30,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(31,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(32,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(33,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(34,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(35,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(36,'grants','acme.standup',NULL,NULL);
INSERT INTO "changes" VALUES(37,'grants','acme.other',NULL,NULL);
INSERT INTO "changes" VALUES(38,'node','c1',NULL,NULL);
INSERT INTO "changes" VALUES(39,'node','c2',NULL,NULL);
INSERT INTO "changes" VALUES(40,'node','a1',NULL,NULL);
INSERT INTO "changes" VALUES(41,'node','a2',NULL,NULL);
INSERT INTO "changes" VALUES(42,'node','y1',NULL,NULL);
INSERT INTO "changes" VALUES(43,'node','t1',NULL,NULL);
INSERT INTO "changes" VALUES(44,'node','n1',NULL,NULL);
INSERT INTO "changes" VALUES(45,'arrow','e1',NULL,NULL);
INSERT INTO "changes" VALUES(46,'arrow','e2',NULL,NULL);
INSERT INTO "changes" VALUES(47,'arrow','e3',NULL,NULL);
INSERT INTO "changes" VALUES(48,'arrow','e4',NULL,NULL);
INSERT INTO "changes" VALUES(49,'arrow','e5',NULL,NULL);
INSERT INTO "changes" VALUES(50,'arrow','e6',NULL,NULL);
INSERT INTO "changes" VALUES(51,'arrow','e7',NULL,NULL);
INSERT INTO "changes" VALUES(52,'rate','c1','prompt',1.79662828708488655094e+09);
INSERT INTO "changes" VALUES(53,'node','a1',NULL,NULL);
INSERT INTO "changes" VALUES(54,'prompt','p1',NULL,NULL);
INSERT INTO "changes" VALUES(55,'rate','c1','prompt',1.79662828708695101738e+09);
INSERT INTO "changes" VALUES(56,'prompt','p2',NULL,NULL);
INSERT INTO "changes" VALUES(57,'rate','c1','write',1.79662828709183287618e+09);
INSERT INTO "changes" VALUES(58,'node','t1',NULL,NULL);
INSERT INTO "changes" VALUES(59,'node','n1',NULL,NULL);
INSERT INTO "changes" VALUES(60,'rate','c1','prompt',1.79662828709721374511e+09);
INSERT INTO "changes" VALUES(61,'prompt','p3',NULL,NULL);
INSERT INTO "changes" VALUES(62,'rate','c1','prompt',1.79662828710028886795e+09);
INSERT INTO "changes" VALUES(63,'prompt','p4',NULL,NULL);
INSERT INTO "changes" VALUES(64,'rate','c1','prompt',1.79662828710526275635e+09);
INSERT INTO "changes" VALUES(65,'prompt','p5',NULL,NULL);
INSERT INTO "changes" VALUES(66,'prompt','p3',NULL,NULL);
INSERT INTO "changes" VALUES(67,'prompt','p3',NULL,NULL);
INSERT INTO "changes" VALUES(68,'prompt','p3',NULL,NULL);
INSERT INTO "changes" VALUES(69,'prompt','p3',NULL,NULL);
INSERT INTO "changes" VALUES(70,'prompt','p3',NULL,NULL);
INSERT INTO "changes" VALUES(71,'prompt','p3',NULL,NULL);
INSERT INTO "changes" VALUES(72,'node','y1',NULL,NULL);
INSERT INTO "changes" VALUES(73,'prompt','p4',NULL,NULL);
INSERT INTO "changes" VALUES(74,'prompt','p4',NULL,NULL);
INSERT INTO "changes" VALUES(75,'tool_call','tc1',NULL,NULL);
INSERT INTO "changes" VALUES(76,'tool_call','tc2',NULL,NULL);
INSERT INTO "changes" VALUES(77,'tool_call','tc1',NULL,NULL);
INSERT INTO "changes" VALUES(78,'secrets','gh',NULL,NULL);
INSERT INTO "changes" VALUES(79,'token','tok_ed172d51e92247c3',NULL,NULL);
CREATE TABLE "consent" (
   "seq" INTEGER PRIMARY KEY,
   "t" REAL,
   "principal" TEXT,
   "action" TEXT,
   "subject" TEXT,
   "accepted" INTEGER,
   "code" TEXT,
   "reason" TEXT,
   "detail" TEXT
, prev text, hash text, grants text);
INSERT INTO "consent" VALUES(1,1.79662828692479157452e+09,'operator','workspace.create','{"workspace": "w1"}',1,NULL,NULL,'','0000000000000000000000000000000000000000000000000000000000000000','23ce76317ac1d7e1b12ba667255e22f60b5c5bb020bb575d3544c5752e130e30','4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
INSERT INTO "consent" VALUES(2,1.7966282869476413727e+09,'operator','install','{"granted": ["agents.prompt", "cards.connected", "terminals.write"], "hash": "sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170", "package": "acme.standup"}',1,NULL,NULL,'','23ce76317ac1d7e1b12ba667255e22f60b5c5bb020bb575d3544c5752e130e30','a7c18ebdda7b3ec33681b572d259f03d2fc9164469b7e7710cd1fe6914f63b59','b4bfe897e9e1bc55b9439fbfbccc0e9ab3b845bebc3c3e2ce787da3e158b6e9e');
INSERT INTO "consent" VALUES(3,1.79662828696797013277e+09,'operator','install','{"granted": ["agents.prompt"], "hash": "sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b", "package": "acme.other"}',1,NULL,NULL,'','a7c18ebdda7b3ec33681b572d259f03d2fc9164469b7e7710cd1fe6914f63b59','ec3c57df14f3c9fbf653465d5bcd47882cb24c6a0e51e67541dcf253ff9927e9','001c4ebd7d9a2babfcaea57c6c4cfb2a600f502a2305bc5bd06f2bd65e020c68');
INSERT INTO "consent" VALUES(4,1.79662828698221278193e+09,'operator','grant','{"package": "acme.standup", "permission": "usage.read"}',1,NULL,NULL,'','ec3c57df14f3c9fbf653465d5bcd47882cb24c6a0e51e67541dcf253ff9927e9','216883ed0145f76339310563cab7d50c963c45474d162675ac5475f1f038508f','33ed0ba6b4e6ace89040e31b875d4a1998c798f50e2234425507b638fce00227');
INSERT INTO "consent" VALUES(5,1.79662828699337124823e+09,'operator','grant','{"package": "acme.standup", "permission": "clipboard.write"}',1,NULL,NULL,'','216883ed0145f76339310563cab7d50c963c45474d162675ac5475f1f038508f','335bd533a23e3f0a667ab985bbb7c88bc3f910d61fe3a7337d45f5cc411dbd49','2b95d39119007576081b6fd5c395e19c5c9eec3715d69ffda479bbc036c34582');
INSERT INTO "consent" VALUES(6,1.79662828699701523785e+09,'operator','revoke','{"package": "acme.standup", "permission": "clipboard.write"}',1,NULL,NULL,'','335bd533a23e3f0a667ab985bbb7c88bc3f910d61fe3a7337d45f5cc411dbd49','a590f61a1e17375ceb8601e323e5b699465b4714cf21b5c1ac3c07049618aac4','050a5077e2e676f2762113f195a04189a0d607dfcfb06f52ac6453a50e583ba7');
INSERT INTO "consent" VALUES(7,1.79662828700094079964e+09,'operator','revoke','{"package": "acme.other", "permission": "agents.prompt"}',1,NULL,NULL,'','a590f61a1e17375ceb8601e323e5b699465b4714cf21b5c1ac3c07049618aac4','6a7e2fafced4d0dbcc446aa0f18c67e44ecd9c25aa038231dacdec4321e06383','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(8,1.79662828700914335255e+09,'operator','node.add','{"node": "c1", "workspace": "w1"}',1,NULL,NULL,'','6a7e2fafced4d0dbcc446aa0f18c67e44ecd9c25aa038231dacdec4321e06383','861ca5365091860672522aeead9285a3aff12032a8ef997be9bad0086331348f','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(9,1.7966282870130221844e+09,'operator','node.add','{"node": "c2", "workspace": "w1"}',1,NULL,NULL,'','861ca5365091860672522aeead9285a3aff12032a8ef997be9bad0086331348f','e9a475342793fbbfc9235a603afa70560189e5424f05d4e182ba114fb6d0e74e','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(10,1.79662828702097392089e+09,'operator','node.add','{"node": "a1", "workspace": "w1"}',1,NULL,NULL,'','e9a475342793fbbfc9235a603afa70560189e5424f05d4e182ba114fb6d0e74e','191e0fe12900a4ca5b40bd6ea6fce36e4710dc8b847c03a5e41fcae0e78ffe82','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(11,1.7966282870269973278e+09,'operator','node.add','{"node": "a2", "workspace": "w1"}',1,NULL,NULL,'','191e0fe12900a4ca5b40bd6ea6fce36e4710dc8b847c03a5e41fcae0e78ffe82','dc88613d771302578510082ea11fd7b757d96d67bd6a8a5ac0e42885b1180aa4','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(12,1.79662828703299665448e+09,'operator','node.add','{"node": "y1", "workspace": "w1"}',1,NULL,NULL,'','dc88613d771302578510082ea11fd7b757d96d67bd6a8a5ac0e42885b1180aa4','7c816a40a06b0681ad979ef0973737b64f7404c0e4e06a9157dfcdee745d14e3','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(13,1796628287.03739,'operator','node.add','{"node": "t1", "workspace": "w1"}',1,NULL,NULL,'','7c816a40a06b0681ad979ef0973737b64f7404c0e4e06a9157dfcdee745d14e3','228bf18c29efb241bdc8c586ff3e5a1947f7ad840e554129e28cad1bf1c98ec7','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(14,1.79662828704479908938e+09,'operator','node.add','{"node": "n1", "workspace": "w1"}',1,NULL,NULL,'','228bf18c29efb241bdc8c586ff3e5a1947f7ad840e554129e28cad1bf1c98ec7','64aab56fe142e652279f551157110c534a955255f808829d4102afd8b02b9ea2','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(15,1.79662828705303454402e+09,'operator','arrow.add','{"arrow": "e1", "from": "c1", "to": "a1"}',1,NULL,NULL,'','64aab56fe142e652279f551157110c534a955255f808829d4102afd8b02b9ea2','9822659282f0b4286d64f01553b05a6c1474fbe7b2b84a2ea45cbe8a3a9f86e3','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(16,1.79662828705693387986e+09,'operator','arrow.add','{"arrow": "e2", "from": "c1", "to": "y1"}',1,NULL,NULL,'','9822659282f0b4286d64f01553b05a6c1474fbe7b2b84a2ea45cbe8a3a9f86e3','c1174ff79b16dcd38e12050f82e8c58c38ad4be3153e729dc8dae6688cc368f7','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(17,1.79662828706094217299e+09,'operator','arrow.add','{"arrow": "e3", "from": "c1", "to": "t1"}',1,NULL,NULL,'','c1174ff79b16dcd38e12050f82e8c58c38ad4be3153e729dc8dae6688cc368f7','c70acf2e9745dc4070e552943fd26057b30e9460fcb1d955487538067a3f04bc','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(18,1.79662828706892299659e+09,'operator','arrow.add','{"arrow": "e4", "from": "a1", "to": "c1"}',1,NULL,NULL,'','c70acf2e9745dc4070e552943fd26057b30e9460fcb1d955487538067a3f04bc','5785db469dcfba66779cf038696cfcd9e852fc432cb87f4d8c646d40e5a22f07','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(19,1.79662828707334494594e+09,'operator','arrow.add','{"arrow": "e5", "from": "c2", "to": "a1"}',1,NULL,NULL,'','5785db469dcfba66779cf038696cfcd9e852fc432cb87f4d8c646d40e5a22f07','0e06ea9bf84af64bc1de0eecfbe01c9715e1d6b2c4946a8f65bedb1b8a796b80','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(20,1.79662828707686972624e+09,'operator','arrow.add','{"arrow": "e6", "from": "c1", "to": "n1"}',1,NULL,NULL,'','0e06ea9bf84af64bc1de0eecfbe01c9715e1d6b2c4946a8f65bedb1b8a796b80','e795bc8b5e7f1d24dee4ff1d2f265cee41f68794d503a7d2ca8490b279407e7e','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(21,1.79662828708007407188e+09,'operator','arrow.add','{"arrow": "e7", "from": "c1", "to": "a2"}',1,NULL,NULL,'','e795bc8b5e7f1d24dee4ff1d2f265cee41f68794d503a7d2ca8490b279407e7e','53f5f7b06e83d09a02f77c8501091a12172a2d2db801552d89ae5c7dec6551d5','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(22,1.79662828710612249372e+09,'operator','hold.approve','{"package": "acme.standup", "prompt": "p3"}',1,NULL,NULL,'','53f5f7b06e83d09a02f77c8501091a12172a2d2db801552d89ae5c7dec6551d5','93db30d7379e4b7181fac4739d94d8697fdf685f66ad7470cd046cf8beed71bb','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(23,1.79662828710915470128e+09,'operator','hold.reject','{"package": "acme.standup", "prompt": "p4"}',1,NULL,NULL,'','93db30d7379e4b7181fac4739d94d8697fdf685f66ad7470cd046cf8beed71bb','61a32810ba54ed5cccff51896875cd275030b719aaf03b5f1e91035e1b644784','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
INSERT INTO "consent" VALUES(24,1.79662828711626625056e+09,'operator','secret.set','{"host": "api.github.com", "secret": "gh"}',1,NULL,NULL,'','61a32810ba54ed5cccff51896875cd275030b719aaf03b5f1e91035e1b644784','8b0d28ed89abb11445d30ae8049da999148a01bf8c126ca4992cc443614a63ff','8746b3d5b76735b92956aea5c99ad02766bb4c8fe02e6fbbed99a139bb178280');
CREATE TABLE "grants" (
   "package" TEXT,
   "permission" TEXT,
   "t" REAL,
   "by" TEXT,
   PRIMARY KEY ("package", "permission")
);
INSERT INTO "grants" VALUES('acme.standup','agents.prompt',1.7966282869969708919e+09,'operator');
INSERT INTO "grants" VALUES('acme.standup','cards.connected',1.7966282869969708919e+09,'operator');
INSERT INTO "grants" VALUES('acme.standup','terminals.write',1.7966282869969708919e+09,'operator');
INSERT INTO "grants" VALUES('acme.standup','usage.read',1.7966282869969708919e+09,'operator');
CREATE TABLE log ( seq integer primary key, t real, workspace text, arrow text, card text, package text, version text, call text, target text, payload text, chain text, outcome text, code text, reason text, approver text, prompt text, prev text not null, hash text not null, payload_bytes integer, payload_sha256 text);
INSERT INTO "log" VALUES(1,1.79662828708488655094e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','a1','hello one','["c1", "a1"]','queued',NULL,NULL,NULL,'p1','0000000000000000000000000000000000000000000000000000000000000000','e1b0ed3088518c804cbd7f4d812cb5862d04fdaf5bb8279ca275cb310ff3e71d',NULL,NULL);
INSERT INTO "log" VALUES(2,1.79662828708695101738e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','a1','hello two','["c1", "a1"]','queued',NULL,NULL,NULL,'p2','e1b0ed3088518c804cbd7f4d812cb5862d04fdaf5bb8279ca275cb310ff3e71d','9a2cc86dd8debff7a7e2bd005a51cc4560b753de88890ef801dfd4d4f7d17baa',NULL,NULL);
INSERT INTO "log" VALUES(3,1.79662828708840584756e+09,'w1','e5','c2','acme.other','sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b','agents.prompt','a1','revoked',NULL,'denied','PERMISSION_DENIED','not-granted',NULL,NULL,'9a2cc86dd8debff7a7e2bd005a51cc4560b753de88890ef801dfd4d4f7d17baa','f6cf656c4f71d898e3cdf33c66d3c04521c2aa2bb6a3fae378aa5c04e1693eb2',NULL,NULL);
INSERT INTO "log" VALUES(4,1.79662828709069275854e+09,'w1',NULL,'c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','clipboard.copyText',NULL,'revoked',NULL,'denied','PERMISSION_DENIED','not-granted',NULL,NULL,'f6cf656c4f71d898e3cdf33c66d3c04521c2aa2bb6a3fae378aa5c04e1693eb2','f8d41930ea5e6a9eadb55a48f306a410d52cfa4bb5a508181812a41aea23efb6',NULL,NULL);
INSERT INTO "log" VALUES(5,1.79662828709195184712e+09,'w1','e3','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','terminals.write','t1','ls
',NULL,'ok',NULL,NULL,NULL,NULL,'f8d41930ea5e6a9eadb55a48f306a410d52cfa4bb5a508181812a41aea23efb6','2cb6f094016910294f4ef42351f930f7ad1e54da452475b675c38d618eaac559',NULL,NULL);
INSERT INTO "log" VALUES(6,1.79662828709479832642e+09,'w1','e6','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','cards.note.append','n1',' more',NULL,'ok',NULL,NULL,NULL,NULL,'2cb6f094016910294f4ef42351f930f7ad1e54da452475b675c38d618eaac559','6729aec886c7eed70184c34cafa124c5c2116d33c8e5f80970a97e61b630a45b',NULL,NULL);
INSERT INTO "log" VALUES(7,1.79662828709721374511e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 0','["c1", "y1"]','held',NULL,NULL,NULL,'p3','6729aec886c7eed70184c34cafa124c5c2116d33c8e5f80970a97e61b630a45b','495228833a417eee140457b4fd4ca11243cc86abc8a72431693a567be55f8ccc',NULL,NULL);
INSERT INTO "log" VALUES(8,1.79662828710028886795e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 1','["c1", "y1"]','held',NULL,NULL,NULL,'p4','495228833a417eee140457b4fd4ca11243cc86abc8a72431693a567be55f8ccc','2cf2d5e8d18f3be515118cadd77f7085515da201a4e14c28a69870c763991733',NULL,NULL);
INSERT INTO "log" VALUES(9,1.79662828710526275635e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 2','["c1", "y1"]','held',NULL,NULL,NULL,'p5','2cf2d5e8d18f3be515118cadd77f7085515da201a4e14c28a69870c763991733','b6bb8f26786ec346f82b2160bb9e50bc996ededb999f4a11f68863bf6fdd6f00',NULL,NULL);
INSERT INTO "log" VALUES(10,1.79662828710623621942e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 0','["c1", "y1"]','approved',NULL,NULL,'operator','p3','b6bb8f26786ec346f82b2160bb9e50bc996ededb999f4a11f68863bf6fdd6f00','4b725f4245ba669eef970636843dccf304485cf67c65b605264dca858342e1bf',NULL,NULL);
INSERT INTO "log" VALUES(11,1.79662828710924196238e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 1','["c1", "y1"]','rejected','PROMPT_REJECTED',NULL,'operator','p4','4b725f4245ba669eef970636843dccf304485cf67c65b605264dca858342e1bf','89bae6a1d6555dadd0767dd804093f653b03e413cebd7c931647bcc5ee7f7f59',NULL,NULL);
INSERT INTO "log" VALUES(12,1796628287.11016,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','tool:summarize','a1','{}','["c1", "a1", "c1"]','ok',NULL,NULL,NULL,'tc1','89bae6a1d6555dadd0767dd804093f653b03e413cebd7c931647bcc5ee7f7f59','d84c06bc1f1d47dd5b7eef45b6da4833aa5765dbf053d6bdc06f7a1e67cf1db7',NULL,NULL);
INSERT INTO "log" VALUES(13,1.79662828711459612853e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','tool:summarize','a1','{}','["c1", "a1", "c1"]','ok',NULL,NULL,NULL,'tc2','d84c06bc1f1d47dd5b7eef45b6da4833aa5765dbf053d6bdc06f7a1e67cf1db7','cb87a9a7c91a26a9915aad6a444f1e1de60ffe4b1ef5ba1ba54cdf377c848809',NULL,NULL);
INSERT INTO "log" VALUES(14,1.79662828711535978317e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','tool:summarize','a1','{"ok": true}','["c1", "a1", "c1"]','answered',NULL,NULL,NULL,'tc1','cb87a9a7c91a26a9915aad6a444f1e1de60ffe4b1ef5ba1ba54cdf377c848809','f2de89cc98b1a5bdbb66a59f67594043686f8c5f5ece95e4a449cd39efeb487e',NULL,NULL);
CREATE TABLE log_arrows (arrow text not null, seq integer not null, primary key (arrow, seq)) without rowid;
CREATE TABLE log_cards (card text not null, seq integer not null, primary key (card, seq)) without rowid;
CREATE TABLE "meta" (
   "key" TEXT PRIMARY KEY,
   "value" TEXT
);
INSERT INTO "meta" VALUES('log_keyed','0');
INSERT INTO "meta" VALUES('anchored','1');
CREATE TABLE "nodes" (
   "id" TEXT PRIMARY KEY,
   "workspace" TEXT,
   "type" TEXT,
   "data" TEXT,
   "position" INTEGER
);
INSERT INTO "nodes" VALUES('c1','w1','card','{"background": false, "package": "acme.standup", "visible": true}',1);
INSERT INTO "nodes" VALUES('c2','w1','card','{"background": false, "package": "acme.other", "visible": true}',2);
INSERT INTO "nodes" VALUES('a1','w1','agent','{"chain": ["c1", "a1"], "dangerous": false, "name": "Builder", "screen": "> hello one\n", "status": "working", "tool": ""}',3);
INSERT INTO "nodes" VALUES('a2','w1','agent','{"dangerous": false, "name": "Quiet", "status": "waiting", "tool": ""}',4);
INSERT INTO "nodes" VALUES('y1','w1','agent','{"chain": ["c1", "y1"], "dangerous": true, "name": "Yolo", "screen": "> rm -rf build 0\n", "status": "working", "tool": ""}',5);
INSERT INTO "nodes" VALUES('t1','w1','terminal','{"name": "shell", "screen": "ls\n", "shell": "bash", "status": "waiting"}',6);
INSERT INTO "nodes" VALUES('n1','w1','note','{"text": "hi\n more"}',7);
CREATE TABLE "packages" (
   "name" TEXT PRIMARY KEY,
   "state" TEXT,
   "manifest" TEXT,
   "digests" TEXT,
   "hash" TEXT,
   "pending_manifest" TEXT,
   "pending_digests" TEXT,
   "pending_hash" TEXT
);
INSERT INTO "packages" VALUES('acme.standup','installed','{"name": "acme.standup", "version": "1.0.0", "permissions": {"agents.prompt": {}, "terminals.write": {}, "cards.connected": {}, "usage.read": {"optional": true}, "clipboard.write": {"optional": true}}, "tools": ["summarize"]}','{"manifest.json": "b7df93574c1c37ab0952c73bd0fe96625d7b3cb77d7f24b076370b13af4cd53d"}','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170',NULL,NULL,NULL);
INSERT INTO "packages" VALUES('acme.other','installed','{"name": "acme.other", "version": "0.1.0", "permissions": {"agents.prompt": {}}}','{"manifest.json": "0c5782a6701078dbc7e45c6452e498af10bf62ffe3b88bf74683f8c7df3d5d6e"}','sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b',NULL,NULL,NULL);
CREATE TABLE prompt_budget (workspace TEXT PRIMARY KEY, level REAL NOT NULL, at REAL NOT NULL);
INSERT INTO "prompt_budget" VALUES('w1',1.99788982868194575637e+00,1.7966282871062982082e+09);
CREATE TABLE "prompts" (
   "id" TEXT PRIMARY KEY,
   "position" INTEGER,
   "workspace" TEXT,
   "card" TEXT,
   "package" TEXT,
   "agent" TEXT,
   "arrow" TEXT,
   "call" TEXT,
   "text" TEXT,
   "chain" TEXT,
   "state" TEXT,
   "t" REAL,
   "deadline" REAL,
   "approver" TEXT,
   "code" TEXT,
   "reason" TEXT,
   "message" TEXT
);
INSERT INTO "prompts" VALUES('p1',1,'w1','c1','acme.standup','a1','e1','agents.prompt','hello one','["c1", "a1"]','delivered',1.79662828708488655094e+09,NULL,NULL,NULL,NULL,'');
INSERT INTO "prompts" VALUES('p2',2,'w1','c1','acme.standup','a1','e1','agents.prompt','hello two','["c1", "a1"]','queued',1.79662828708695101738e+09,NULL,NULL,NULL,NULL,'');
INSERT INTO "prompts" VALUES('p5',5,'w1','c1','acme.standup','y1','e2','agents.prompt','rm -rf build 2','["c1", "y1"]','held',1.79662828710526275635e+09,1.79662858710526275639e+09,NULL,NULL,NULL,'');
INSERT INTO "prompts" VALUES('p3',3,'w1','c1','acme.standup','y1','e2','agents.prompt','rm -rf build 0','["c1", "y1"]','delivered',1.79662828709721374511e+09,1.79662858709721374506e+09,'operator',NULL,NULL,'');
INSERT INTO "prompts" VALUES('p4',4,'w1','c1','acme.standup','y1','e2','agents.prompt','rm -rf build 1','["c1", "y1"]','rejected',1.79662828710028886795e+09,1.7966285871002888679e+09,'operator','PROMPT_REJECTED',NULL,'PROMPT_REJECTED: a person rejected prompt p4');
CREATE TABLE "rate_events" (
   "id" INTEGER PRIMARY KEY,
   "card" TEXT,
   "key" TEXT,
   "t" REAL
);
INSERT INTO "rate_events" VALUES(1,'c1','prompt',1.79662828708488655094e+09);
INSERT INTO "rate_events" VALUES(2,'c1','prompt',1.79662828708695101738e+09);
INSERT INTO "rate_events" VALUES(3,'c1','write',1.79662828709183287618e+09);
INSERT INTO "rate_events" VALUES(4,'c1','prompt',1.79662828709721374511e+09);
INSERT INTO "rate_events" VALUES(5,'c1','prompt',1.79662828710028886795e+09);
INSERT INTO "rate_events" VALUES(6,'c1','prompt',1.79662828710526275635e+09);
CREATE TABLE "secrets" (
   "name" TEXT PRIMARY KEY,
   "host" TEXT,
   "value" TEXT,
   "t" REAL
);
INSERT INTO "secrets" VALUES('gh','api.github.com','s3cret',1.79662828711622047424e+09);
CREATE TABLE "service_tokens" (
   "id" TEXT PRIMARY KEY,
   "hash" TEXT,
   "principal" TEXT,
   "t" REAL,
   "revoked" REAL
);
INSERT INTO "service_tokens" VALUES('tok_bb7ba6d623ad2465','37faaecdebc65de483fbe27cf88ea5aef83d8777efb6cb004ae30d5a493f90eb','card:c1',1.79662828715224289896e+09,NULL);
INSERT INTO "service_tokens" VALUES('tok_ed172d51e92247c3','19b0c1e9966d9b7fa8a52c4ed089955d7d75e48855cb8cc8070494b468f55c8f','card:c1',1.79662828715692639344e+09,1.79662828715738773343e+09);
CREATE TABLE suppressed_pending (key TEXT PRIMARY KEY, summary TEXT NOT NULL);
CREATE TABLE "tool_calls" (
   "id" TEXT PRIMARY KEY,
   "position" INTEGER,
   "workspace" TEXT,
   "agent" TEXT,
   "card" TEXT,
   "package" TEXT,
   "tool" TEXT,
   "arrow" TEXT,
   "args" TEXT,
   "chain" TEXT,
   "state" TEXT,
   "t" REAL,
   "deadline" REAL,
   "result" TEXT,
   "code" TEXT,
   "reason" TEXT,
   "message" TEXT,
   "ended" REAL
);
INSERT INTO "tool_calls" VALUES('tc1',1,'w1','a1','c1','acme.standup','summarize','e1','{}','["c1", "a1", "c1"]','answered',1.79662828711006975174e+09,1.79662840711006975176e+09,'{"ok": true}',NULL,NULL,'',1.79662828711537814144e+09);
INSERT INTO "tool_calls" VALUES('tc2',2,'w1','a1','c1','acme.standup','summarize','e1','{}','["c1", "a1", "c1"]','open',1.79662828711454939842e+09,1.79662840711454939845e+09,'null',NULL,NULL,'',NULL);
CREATE TABLE "usage" (
   "workspace" TEXT PRIMARY KEY,
   "tokens" INTEGER,
   "cost" REAL
);
CREATE TABLE "workspaces" (
   "id" TEXT PRIMARY KEY,
   "folder" TEXT,
   "settings" TEXT
);
INSERT INTO "workspaces" VALUES('w1','/tmp/tmpmx7k8ov2/project','{"card_cap": 100, "budget": [60, 600.0], "hold_timeout": 300.0, "hop_limit": 3, "reserved_ports": [], "secret_denylist": true, "fetch_timeout": 30.0, "fetch_max_bytes": 5000000, "max_payload": 262144, "denial_log_limit": 120, "fs_max_bytes": 16777216, "tool_timeout": 120.0}');
CREATE UNIQUE INDEX [idx__sqlite_migrations_migration_set_name] on [_sqlite_migrations] ([migration_set], [name]);
CREATE INDEX "idx_prompts_position"
    ON "prompts" ("position");
CREATE UNIQUE INDEX "idx_service_tokens_hash"
    ON "service_tokens" ("hash");
CREATE INDEX "idx_tool_calls_state"
    ON "tool_calls" ("state");
CREATE INDEX "idx_tool_calls_position"
    ON "tool_calls" ("position");
CREATE INDEX "idx_nodes_workspace"
    ON "nodes" ("workspace");
CREATE INDEX "idx_arrows_workspace"
    ON "arrows" ("workspace");
CREATE INDEX "idx_nodes_position"
    ON "nodes" ("position");
CREATE TRIGGER changes_packages_insert after insert on packages begin insert into changes (kind, key) values ('package', new.name); end;
CREATE TRIGGER changes_packages_delete after delete on packages begin insert into changes (kind, key) values ('package', old.name); end;
CREATE TRIGGER changes_packages_update after update on packages begin insert into changes (kind, key) values ('package', old.name); insert into changes (kind, key) select 'package', new.name where new.name is not old.name; end;
CREATE TRIGGER changes_grants_insert after insert on grants begin insert into changes (kind, key) values ('grants', new.package); end;
CREATE TRIGGER changes_grants_delete after delete on grants begin insert into changes (kind, key) values ('grants', old.package); end;
CREATE TRIGGER changes_grants_update after update on grants begin insert into changes (kind, key) values ('grants', old.package); insert into changes (kind, key) select 'grants', new.package where new.package is not old.package; end;
CREATE TRIGGER changes_workspaces_insert after insert on workspaces begin insert into changes (kind, key) values ('workspace', new.id); end;
CREATE TRIGGER changes_workspaces_delete after delete on workspaces begin insert into changes (kind, key) values ('workspace', old.id); end;
CREATE TRIGGER changes_workspaces_update after update on workspaces begin insert into changes (kind, key) values ('workspace', old.id); insert into changes (kind, key) select 'workspace', new.id where new.id is not old.id; end;
CREATE TRIGGER changes_nodes_insert after insert on nodes begin insert into changes (kind, key) values ('node', new.id); end;
CREATE TRIGGER changes_nodes_delete after delete on nodes begin insert into changes (kind, key) values ('node', old.id); end;
CREATE TRIGGER changes_nodes_update after update on nodes begin insert into changes (kind, key) values ('node', old.id); insert into changes (kind, key) select 'node', new.id where new.id is not old.id; end;
CREATE TRIGGER changes_arrows_insert after insert on arrows begin insert into changes (kind, key) values ('arrow', new.id); end;
CREATE TRIGGER changes_arrows_delete after delete on arrows begin insert into changes (kind, key) values ('arrow', old.id); end;
CREATE TRIGGER changes_arrows_update after update on arrows begin insert into changes (kind, key) values ('arrow', old.id); insert into changes (kind, key) select 'arrow', new.id where new.id is not old.id; end;
CREATE TRIGGER changes_prompts_insert after insert on prompts begin insert into changes (kind, key) values ('prompt', new.id); end;
CREATE TRIGGER changes_prompts_delete after delete on prompts begin insert into changes (kind, key) values ('prompt', old.id); end;
CREATE TRIGGER changes_prompts_update after update on prompts begin insert into changes (kind, key) values ('prompt', old.id); insert into changes (kind, key) select 'prompt', new.id where new.id is not old.id; end;
CREATE TRIGGER changes_tool_calls_insert after insert on tool_calls begin insert into changes (kind, key) values ('tool_call', new.id); end;
CREATE TRIGGER changes_tool_calls_delete after delete on tool_calls begin insert into changes (kind, key) values ('tool_call', old.id); end;
CREATE TRIGGER changes_tool_calls_update after update on tool_calls begin insert into changes (kind, key) values ('tool_call', old.id); insert into changes (kind, key) select 'tool_call', new.id where new.id is not old.id; end;
CREATE TRIGGER changes_usage_insert after insert on usage begin insert into changes (kind, key) values ('usage', new.workspace); end;
CREATE TRIGGER changes_usage_delete after delete on usage begin insert into changes (kind, key) values ('usage', old.workspace); end;
CREATE TRIGGER changes_usage_update after update on usage begin insert into changes (kind, key) values ('usage', old.workspace); insert into changes (kind, key) select 'usage', new.workspace where new.workspace is not old.workspace; end;
CREATE TRIGGER changes_secrets_insert after insert on secrets begin insert into changes (kind, key) values ('secrets', new.name); end;
CREATE TRIGGER changes_secrets_delete after delete on secrets begin insert into changes (kind, key) values ('secrets', old.name); end;
CREATE TRIGGER changes_secrets_update after update on secrets begin insert into changes (kind, key) values ('secrets', old.name); insert into changes (kind, key) select 'secrets', new.name where new.name is not old.name; end;
CREATE TRIGGER changes_rate_events_insert after insert on rate_events begin insert into changes (kind, key, key2, t) values ('rate', new.card, new.key, new.t); end;
CREATE TRIGGER changes_rate_events_delete after delete on rate_events begin insert into changes (kind, key) values ('rates', old.card); end;
CREATE TRIGGER changes_rate_events_update after update on rate_events begin insert into changes (kind, key) values ('rates', old.card); end;
CREATE TRIGGER changes_suppressed_pending_insert after insert on suppressed_pending begin insert into changes (kind, key) values ('pending', new.key); end;
CREATE TRIGGER changes_service_tokens_update after update on service_tokens begin insert into changes (kind, key) values ('token', old.id); end;
CREATE TRIGGER changes_service_tokens_delete after delete on service_tokens begin insert into changes (kind, key) values ('token', old.id); end;
CREATE INDEX idx_prompts_in_play on prompts (position) where (state = 'delivered' or state = 'held' or state = 'queued');
COMMIT;
