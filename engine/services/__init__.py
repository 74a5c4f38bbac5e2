"""The engine's services: canvas and consent operations, calls, prompts and
holds, tools, interchange and subscriptions, each given its dependencies."""
