BEGIN TRANSACTION;
CREATE TABLE [_sqlite_migrations] ([id] INTEGER PRIMARY KEY, [migration_set] TEXT, [name] TEXT, [applied_at] TEXT);
INSERT INTO "_sqlite_migrations" VALUES(1,'arrowgate','m001_engine','2026-12-07 07:24:44.996208+00:00');
INSERT INTO "_sqlite_migrations" VALUES(2,'arrowgate','m002_secrets','2026-12-07 07:24:44.996359+00:00');
INSERT INTO "_sqlite_migrations" VALUES(3,'arrowgate','m003_prompt_position','2026-12-07 07:24:44.996418+00:00');
INSERT INTO "_sqlite_migrations" VALUES(4,'arrowgate','m004_consent_chain','2026-12-07 07:24:44.996684+00:00');
INSERT INTO "_sqlite_migrations" VALUES(5,'arrowgate','m005_log_payload_digest','2026-12-07 07:24:44.996879+00:00');
INSERT INTO "_sqlite_migrations" VALUES(6,'arrowgate','m006_service_tokens','2026-12-07 07:24:44.997029+00:00');
INSERT INTO "_sqlite_migrations" VALUES(7,'arrowgate','m007_tool_calls','2026-12-07 07:24:44.997204+00:00');
INSERT INTO "_sqlite_migrations" VALUES(8,'arrowgate','m008_canvas','2026-12-07 07:24:44.997504+00:00');
INSERT INTO "_sqlite_migrations" VALUES(9,'arrowgate','m009_node_position_index','2026-12-07 07:24:44.997543+00:00');
INSERT INTO "_sqlite_migrations" VALUES(10,'arrowgate','m010_changes','2026-12-07 07:24:44.998233+00:00');
INSERT INTO "_sqlite_migrations" VALUES(11,'arrowgate','m011_changes_pruned_at_commit','2026-12-07 07:24:44.998258+00:00');
INSERT INTO "_sqlite_migrations" VALUES(12,'arrowgate','m012_no_prompt_state_index','2026-12-07 07:24:44.998285+00:00');
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
INSERT INTO "changes" VALUES(52,'rate','c1','prompt',1.79662828508795619007e+09);
INSERT INTO "changes" VALUES(53,'node','a1',NULL,NULL);
INSERT INTO "changes" VALUES(54,'prompt','p1',NULL,NULL);
INSERT INTO "changes" VALUES(55,'rate','c1','prompt',1.79662828510243582731e+09);
INSERT INTO "changes" VALUES(56,'prompt','p2',NULL,NULL);
INSERT INTO "changes" VALUES(57,'rate','c1','write',1.7966282851342697144e+09);
INSERT INTO "changes" VALUES(58,'node','t1',NULL,NULL);
INSERT INTO "changes" VALUES(59,'node','n1',NULL,NULL);
INSERT INTO "changes" VALUES(60,'rate','c1','prompt',1.7966282851528465748e+09);
INSERT INTO "changes" VALUES(61,'prompt','p3',NULL,NULL);
INSERT INTO "changes" VALUES(62,'rate','c1','prompt',1.79662828515596747396e+09);
INSERT INTO "changes" VALUES(63,'prompt','p4',NULL,NULL);
INSERT INTO "changes" VALUES(64,'rate','c1','prompt',1.79662828516115331651e+09);
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
INSERT INTO "consent" VALUES(1,1.79662828503789281844e+09,'operator','workspace.create','{"workspace": "w1"}',1,NULL,NULL,'','0000000000000000000000000000000000000000000000000000000000000000','6b55d91fdb246f831e33992396c00ede518ec422b4b33fb3fd5fb65da7ee9ac6','4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
INSERT INTO "consent" VALUES(2,1.79662828504512262339e+09,'operator','install','{"granted": ["agents.prompt", "cards.connected", "terminals.write"], "hash": "sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170", "package": "acme.standup"}',1,NULL,NULL,'','6b55d91fdb246f831e33992396c00ede518ec422b4b33fb3fd5fb65da7ee9ac6','e0fc48e7950ee98b4cc23f1684dbe0456088cd6c9ce0ce953cfdfbe85f5e42cd','91775c25fd3c0193a5c1c50785b09e1905a0e67c92a704417d18cf9933dae753');
INSERT INTO "consent" VALUES(3,1.79662828504788184159e+09,'operator','install','{"granted": ["agents.prompt"], "hash": "sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b", "package": "acme.other"}',1,NULL,NULL,'','e0fc48e7950ee98b4cc23f1684dbe0456088cd6c9ce0ce953cfdfbe85f5e42cd','e8117e7ce7d23fdf15b90d2a549bcb3011cffa1174ad000d0e9a848b1b1584ce','f9f051d98e4b85548113e1b75ff20fb0b523e100b31b13a845698277f7833c6b');
INSERT INTO "consent" VALUES(4,1.79662828504836106298e+09,'operator','grant','{"package": "acme.standup", "permission": "usage.read"}',1,NULL,NULL,'','e8117e7ce7d23fdf15b90d2a549bcb3011cffa1174ad000d0e9a848b1b1584ce','17595d7c1801f67af322459a55dc72695782f4afe58fc8c02e97f1aa8fcba4c9','811bb0f33ec385b09e305afa8aae6fc8d582b61008502ccde9b32aa0dcf31d5c');
INSERT INTO "consent" VALUES(5,1.79662828504983329777e+09,'operator','grant','{"package": "acme.standup", "permission": "clipboard.write"}',1,NULL,NULL,'','17595d7c1801f67af322459a55dc72695782f4afe58fc8c02e97f1aa8fcba4c9','cd09c19aa7468eeb8ff35f35f37cf403c1911c958808090014cfc6c342f7ebf4','796835748e00a9b0542bb9b13c6b39e5c1e0a8db7121cf1f6d001a2f8c34b221');
INSERT INTO "consent" VALUES(6,1.79662828505201315875e+09,'operator','revoke','{"package": "acme.standup", "permission": "clipboard.write"}',1,NULL,NULL,'','cd09c19aa7468eeb8ff35f35f37cf403c1911c958808090014cfc6c342f7ebf4','8e3613c2e126c0a240e63e6c42382674fc122b5ac59d1b12fa69ecfe4977bab6','5070f9d18e20d66e3726643c3486349d106b38540a4e85c1920c94929d9bc014');
INSERT INTO "consent" VALUES(7,1.79662828505245852472e+09,'operator','revoke','{"package": "acme.other", "permission": "agents.prompt"}',1,NULL,NULL,'','8e3613c2e126c0a240e63e6c42382674fc122b5ac59d1b12fa69ecfe4977bab6','27e436f59f756285526cf11e5e897231a89b13536d5ddf80954f849c38894d64','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(8,1.79662828505307459832e+09,'operator','node.add','{"node": "c1", "workspace": "w1"}',1,NULL,NULL,'','27e436f59f756285526cf11e5e897231a89b13536d5ddf80954f849c38894d64','cd5f1738295ee341fc77a0dbb95bd8a6590c86c02f672f31d439caae88736d13','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(9,1.79662828505551767348e+09,'operator','node.add','{"node": "c2", "workspace": "w1"}',1,NULL,NULL,'','cd5f1738295ee341fc77a0dbb95bd8a6590c86c02f672f31d439caae88736d13','2ed8d5839685e02319e2b56588e9736afa0ecd1d0df3709cdd0c8dc37e83bdb1','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(10,1.79662828505786871914e+09,'operator','node.add','{"node": "a1", "workspace": "w1"}',1,NULL,NULL,'','2ed8d5839685e02319e2b56588e9736afa0ecd1d0df3709cdd0c8dc37e83bdb1','b7fc42c9f3aa46da9baa6f59cdb0eca0562069502b77a2daac1e18c079dd28b3','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(11,1.79662828505832314492e+09,'operator','node.add','{"node": "a2", "workspace": "w1"}',1,NULL,NULL,'','b7fc42c9f3aa46da9baa6f59cdb0eca0562069502b77a2daac1e18c079dd28b3','14dac88e80899169b31fed31bba9e93486b5db5abe0b8d82bda475ceb74d2eac','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(12,1.79662828505870413777e+09,'operator','node.add','{"node": "y1", "workspace": "w1"}',1,NULL,NULL,'','14dac88e80899169b31fed31bba9e93486b5db5abe0b8d82bda475ceb74d2eac','0e791450760becc0a93b2bb0e0dd68dea4e79bf76e2cae643d323e1225682677','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(13,1.79662828505904364584e+09,'operator','node.add','{"node": "t1", "workspace": "w1"}',1,NULL,NULL,'','0e791450760becc0a93b2bb0e0dd68dea4e79bf76e2cae643d323e1225682677','b7ee6ca6f76b409efb5863efb87acbd11077020600752368cd87e501c8772114','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(14,1.79662828505945730214e+09,'operator','node.add','{"node": "n1", "workspace": "w1"}',1,NULL,NULL,'','b7ee6ca6f76b409efb5863efb87acbd11077020600752368cd87e501c8772114','1771548bd2469e1788e70401e082b478aa9e83a16bd3e0596a20f5c8c4d224f8','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(15,1.79662828505990886693e+09,'operator','arrow.add','{"arrow": "e1", "from": "c1", "to": "a1"}',1,NULL,NULL,'','1771548bd2469e1788e70401e082b478aa9e83a16bd3e0596a20f5c8c4d224f8','17a04fdaaad660e36ae281cb9add225d22daa1d46f8e57d69bb644de2071b950','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(16,1.79662828506040644646e+09,'operator','arrow.add','{"arrow": "e2", "from": "c1", "to": "y1"}',1,NULL,NULL,'','17a04fdaaad660e36ae281cb9add225d22daa1d46f8e57d69bb644de2071b950','de8ca5e3e81f847c6949b12211653b11f5304808e0d10c8b600bc2ee087bb72e','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(17,1.79662828506690883632e+09,'operator','arrow.add','{"arrow": "e3", "from": "c1", "to": "t1"}',1,NULL,NULL,'','de8ca5e3e81f847c6949b12211653b11f5304808e0d10c8b600bc2ee087bb72e','b699726193e33b4958e2c62a7590f3bc8f14b6bcaa41e2070973f0b12dffa0e7','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(18,1.79662828506883025169e+09,'operator','arrow.add','{"arrow": "e4", "from": "a1", "to": "c1"}',1,NULL,NULL,'','b699726193e33b4958e2c62a7590f3bc8f14b6bcaa41e2070973f0b12dffa0e7','9ff76e9cb9eae27279d00770e1c7f99b0662c7c19e3e15a73bb05ecf198f6998','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(19,1.79662828507687640194e+09,'operator','arrow.add','{"arrow": "e5", "from": "c2", "to": "a1"}',1,NULL,NULL,'','9ff76e9cb9eae27279d00770e1c7f99b0662c7c19e3e15a73bb05ecf198f6998','e232cdf061aa027e7a89696255c2212213fa59d7494a31b8862215c63e084f1f','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(20,1.79662828508455777168e+09,'operator','arrow.add','{"arrow": "e6", "from": "c1", "to": "n1"}',1,NULL,NULL,'','e232cdf061aa027e7a89696255c2212213fa59d7494a31b8862215c63e084f1f','a3a2b6246670ae9ea4d2147c59a2bf1766c5c434c73fce806ee6a2b8ab28655f','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(21,1.79662828508497834207e+09,'operator','arrow.add','{"arrow": "e7", "from": "c1", "to": "a2"}',1,NULL,NULL,'','a3a2b6246670ae9ea4d2147c59a2bf1766c5c434c73fce806ee6a2b8ab28655f','75e6c8e32358db8adb8acfb991dee4759485e214ba00b361ec711b842a3932b2','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(22,1.79662828516200494765e+09,'operator','hold.approve','{"package": "acme.standup", "prompt": "p3"}',1,NULL,NULL,'','75e6c8e32358db8adb8acfb991dee4759485e214ba00b361ec711b842a3932b2','2a8271f6b6faaeb9954c59b8cb370e6b6bde6452cb447c40cfa890231725c483','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(23,1.79662828517093229293e+09,'operator','hold.reject','{"package": "acme.standup", "prompt": "p4"}',1,NULL,NULL,'','2a8271f6b6faaeb9954c59b8cb370e6b6bde6452cb447c40cfa890231725c483','ee7bc5e793e1cbf4c59e3b6b3ba6ae640aeda8050c0f30c2da7d492acd40e1ec','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
INSERT INTO "consent" VALUES(24,1.79662828517850184438e+09,'operator','secret.set','{"host": "api.github.com", "secret": "gh"}',1,NULL,NULL,'','ee7bc5e793e1cbf4c59e3b6b3ba6ae640aeda8050c0f30c2da7d492acd40e1ec','f420342b010e255cba006c4ce38c342add99934be67c736f5d5db0418a771828','095b542d609e4bf4da1afa7e70fe6e5752b4c01e32977e0a3b582e660ef573ce');
CREATE TABLE "grants" (
   "package" TEXT,
   "permission" TEXT,
   "t" REAL,
   "by" TEXT,
   PRIMARY KEY ("package", "permission")
);
INSERT INTO "grants" VALUES('acme.standup','agents.prompt',1.79662828505197381978e+09,'operator');
INSERT INTO "grants" VALUES('acme.standup','cards.connected',1.79662828505197381978e+09,'operator');
INSERT INTO "grants" VALUES('acme.standup','terminals.write',1.79662828505197381978e+09,'operator');
INSERT INTO "grants" VALUES('acme.standup','usage.read',1.79662828505197381978e+09,'operator');
CREATE TABLE log ( seq integer primary key, t real, workspace text, arrow text, card text, package text, version text, call text, target text, payload text, chain text, outcome text, code text, reason text, approver text, prompt text, prev text not null, hash text not null, payload_bytes integer, payload_sha256 text);
INSERT INTO "log" VALUES(1,1.79662828508795619007e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','a1','hello one','["c1", "a1"]','queued',NULL,NULL,NULL,'p1','0000000000000000000000000000000000000000000000000000000000000000','539e25e77d3169bcfc1582a67ee9574507684d675c7b6da13e0bdf414dd82c22',NULL,NULL);
INSERT INTO "log" VALUES(2,1.79662828510243582731e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','a1','hello two','["c1", "a1"]','queued',NULL,NULL,NULL,'p2','539e25e77d3169bcfc1582a67ee9574507684d675c7b6da13e0bdf414dd82c22','ed70da86625209a2c2701761b7e7791565f7d75d78087688de9b52c130d2017b',NULL,NULL);
INSERT INTO "log" VALUES(3,1.79662828511125707625e+09,'w1','e5','c2','acme.other','sha256:d701a45e88396b48061af380beca5e89a21bd13b3197104ed96fd8b62a7aee4b','agents.prompt','a1','revoked',NULL,'denied','PERMISSION_DENIED','not-granted',NULL,NULL,'ed70da86625209a2c2701761b7e7791565f7d75d78087688de9b52c130d2017b','3b14f08efeb3fc49e97e16c65588f42ba91142cf0833cfa4e16b96e3b92d7226',NULL,NULL);
INSERT INTO "log" VALUES(4,1.79662828512495636934e+09,'w1',NULL,'c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','clipboard.copyText',NULL,'revoked',NULL,'denied','PERMISSION_DENIED','not-granted',NULL,NULL,'3b14f08efeb3fc49e97e16c65588f42ba91142cf0833cfa4e16b96e3b92d7226','8243fc7c7272f36fcbd74633d8d5881150bd3d85ee3724f83c448c2aa349bec8',NULL,NULL);
INSERT INTO "log" VALUES(5,1.79662828513447141642e+09,'w1','e3','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','terminals.write','t1','ls
',NULL,'ok',NULL,NULL,NULL,NULL,'8243fc7c7272f36fcbd74633d8d5881150bd3d85ee3724f83c448c2aa349bec8','5960d20d6b09903e63f3cd71cfedd94743ec64a836f439c4f7644c3c4eb2b69b',NULL,NULL);
INSERT INTO "log" VALUES(6,1.79662828514097547534e+09,'w1','e6','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','cards.note.append','n1',' more',NULL,'ok',NULL,NULL,NULL,NULL,'5960d20d6b09903e63f3cd71cfedd94743ec64a836f439c4f7644c3c4eb2b69b','1b9a4480ec9524cf4e097ff3af9ea57f744f02783985a4bef6417efd81c59ffc',NULL,NULL);
INSERT INTO "log" VALUES(7,1.7966282851528465748e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 0','["c1", "y1"]','held',NULL,NULL,NULL,'p3','1b9a4480ec9524cf4e097ff3af9ea57f744f02783985a4bef6417efd81c59ffc','3d3fd3aa37ac6b01c971cb5fa706a305e5088ce34e50d102dfd0524866f37a78',NULL,NULL);
INSERT INTO "log" VALUES(8,1.79662828515596747396e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 1','["c1", "y1"]','held',NULL,NULL,NULL,'p4','3d3fd3aa37ac6b01c971cb5fa706a305e5088ce34e50d102dfd0524866f37a78','6e8aa13c6e9c1df39298d0e66c605eb2864ceda249e6f84cd24dc91f99ace83b',NULL,NULL);
INSERT INTO "log" VALUES(9,1.79662828516115331651e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 2','["c1", "y1"]','held',NULL,NULL,NULL,'p5','6e8aa13c6e9c1df39298d0e66c605eb2864ceda249e6f84cd24dc91f99ace83b','6c5a5b5edaaa444cc68a86a900f1529d739a487d88c1bff8284be8621b85f24a',NULL,NULL);
INSERT INTO "log" VALUES(10,1.79662828516212940213e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 0','["c1", "y1"]','approved',NULL,NULL,'operator','p3','6c5a5b5edaaa444cc68a86a900f1529d739a487d88c1bff8284be8621b85f24a','ac1c63f1654d2fd40bb6188711e0ec47bf9d3b7d29c8d23077a9a5854315a30c',NULL,NULL);
INSERT INTO "log" VALUES(11,1.7966282851710405349e+09,'w1','e2','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','agents.prompt','y1','rm -rf build 1','["c1", "y1"]','rejected','PROMPT_REJECTED',NULL,'operator','p4','ac1c63f1654d2fd40bb6188711e0ec47bf9d3b7d29c8d23077a9a5854315a30c','e51bf740b4aab6fa104a903ac5a0b89aab14243a6fc673bf41e871a22780ccfd',NULL,NULL);
INSERT INTO "log" VALUES(12,1.7966282851722528935e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','tool:summarize','a1','{}','["c1", "a1", "c1"]','ok',NULL,NULL,NULL,'tc1','e51bf740b4aab6fa104a903ac5a0b89aab14243a6fc673bf41e871a22780ccfd','720bc8dff3231471f86a4774f0556b1bb3628db1e9c29a8f71e707410005e087',NULL,NULL);
INSERT INTO "log" VALUES(13,1.7966282851735925674e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','tool:summarize','a1','{}','["c1", "a1", "c1"]','ok',NULL,NULL,NULL,'tc2','720bc8dff3231471f86a4774f0556b1bb3628db1e9c29a8f71e707410005e087','c5349bd261c0572286d30a9949fb0a2636c73539c64d42f6b172d386623654f2',NULL,NULL);
INSERT INTO "log" VALUES(14,1.79662828517457079892e+09,'w1','e1','c1','acme.standup','sha256:d9f6146973fa5aca4911fa4927c2b34bc38812eabc8fcbfdeb8d56bd0dd74170','tool:summarize','a1','{"ok": true}','["c1", "a1", "c1"]','answered',NULL,NULL,NULL,'tc1','c5349bd261c0572286d30a9949fb0a2636c73539c64d42f6b172d386623654f2','562742a96974e9669f428e857e1343ad72a93ef55550ead595c19788cfac3e66',NULL,NULL);
CREATE TABLE "meta" (
   "key" TEXT PRIMARY KEY,
   "value" TEXT
);
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
INSERT INTO "prompts" VALUES('p1',1,'w1','c1','acme.standup','a1','e1','agents.prompt','hello one','["c1", "a1"]','delivered',1.79662828508795619007e+09,NULL,NULL,NULL,NULL,'');
INSERT INTO "prompts" VALUES('p2',2,'w1','c1','acme.standup','a1','e1','agents.prompt','hello two','["c1", "a1"]','queued',1.79662828510243582731e+09,NULL,NULL,NULL,NULL,'');
INSERT INTO "prompts" VALUES('p5',5,'w1','c1','acme.standup','y1','e2','agents.prompt','rm -rf build 2','["c1", "y1"]','held',1.79662828516115331651e+09,1.79662858516115331647e+09,NULL,NULL,NULL,'');
INSERT INTO "prompts" VALUES('p3',3,'w1','c1','acme.standup','y1','e2','agents.prompt','rm -rf build 0','["c1", "y1"]','delivered',1.7966282851528465748e+09,1.79662858515284657476e+09,'operator',NULL,NULL,'');
INSERT INTO "prompts" VALUES('p4',4,'w1','c1','acme.standup','y1','e2','agents.prompt','rm -rf build 1','["c1", "y1"]','rejected',1.79662828515596747396e+09,1.796628585155967474e+09,'operator','PROMPT_REJECTED',NULL,'PROMPT_REJECTED: a person rejected prompt p4');
CREATE TABLE "rate_events" (
   "id" INTEGER PRIMARY KEY,
   "card" TEXT,
   "key" TEXT,
   "t" REAL
);
INSERT INTO "rate_events" VALUES(1,'c1','prompt',1.79662828508795619007e+09);
INSERT INTO "rate_events" VALUES(2,'c1','prompt',1.79662828510243582731e+09);
INSERT INTO "rate_events" VALUES(3,'c1','write',1.7966282851342697144e+09);
INSERT INTO "rate_events" VALUES(4,'c1','prompt',1.7966282851528465748e+09);
INSERT INTO "rate_events" VALUES(5,'c1','prompt',1.79662828515596747396e+09);
INSERT INTO "rate_events" VALUES(6,'c1','prompt',1.79662828516115331651e+09);
CREATE TABLE "secrets" (
   "name" TEXT PRIMARY KEY,
   "host" TEXT,
   "value" TEXT,
   "t" REAL
);
INSERT INTO "secrets" VALUES('gh','api.github.com','s3cret',1.79662828517845201488e+09);
CREATE TABLE "service_tokens" (
   "id" TEXT PRIMARY KEY,
   "hash" TEXT,
   "principal" TEXT,
   "t" REAL,
   "revoked" REAL
);
INSERT INTO "service_tokens" VALUES('tok_ca9aab2f2f7e691b','6fdac16c93abbf25d96ef2bd3ec6ac5368efb3a2f2647b25cd79c5c178340af3','card:c1',1.79662828519050168994e+09,NULL);
INSERT INTO "service_tokens" VALUES('tok_307b0685a7ce5710','b9d485a30da3acb8db74024cc14d6ff4d9740493fbef0af2de9e2e210a24000e','card:c1',1.79662828519600939751e+09,1.79662828519797420504e+09);
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
INSERT INTO "tool_calls" VALUES('tc1',1,'w1','a1','c1','acme.standup','summarize','e1','{}','["c1", "a1", "c1"]','answered',1.79662828517216634745e+09,1.79662840517216634752e+09,'{"ok": true}',NULL,NULL,'',1.79662828517459034925e+09);
INSERT INTO "tool_calls" VALUES('tc2',2,'w1','a1','c1','acme.standup','summarize','e1','{}','["c1", "a1", "c1"]','open',1.79662828517354893681e+09,1.79662840517354893687e+09,'null',NULL,NULL,'',NULL);
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
INSERT INTO "workspaces" VALUES('w1','/tmp/tmptd62cshc/project','{"card_cap": 100, "budget": [60, 600.0], "hold_timeout": 300.0, "hop_limit": 3, "reserved_ports": [], "secret_denylist": true, "fetch_timeout": 30.0, "fetch_max_bytes": 5000000, "max_payload": 262144, "denial_log_limit": 120, "fs_max_bytes": 16777216, "tool_timeout": 120.0}');
CREATE UNIQUE INDEX [idx__sqlite_migrations_migration_set_name] on [_sqlite_migrations] ([migration_set], [name]);
CREATE INDEX "idx_log_arrow_seq"
    ON "log" ("arrow", "seq");
CREATE INDEX "idx_log_card_seq"
    ON "log" ("card", "seq");
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
COMMIT;
