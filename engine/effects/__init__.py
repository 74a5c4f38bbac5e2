"""Effects: what touches the world once the core has allowed it.

Drivers of real agents and terminals, confined file calls and the path walk,
the guarded fetch, and the operator check. Effects report back through
messages and return values, never by reaching into the engine.
"""
