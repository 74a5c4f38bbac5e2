"""The pure core: what the engine knows and decides, as values.

No SQL, no event loop, no network and no file calls: the catalogue (SPEC §3),
manifests and host patterns (§2), reviews (§4), principals, the state a
decision reads, the decision itself (§5), limits (§6), holds (§7), chains and
tools (§9). Everything here is tested without a database or an event loop.
"""
