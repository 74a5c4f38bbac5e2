"""Drivers: the real agents and terminals behind the canvas's nodes."""

from __future__ import annotations

from engine.effects.drivers.agent import CommandAgent
from engine.effects.drivers.base import (
    AgentDriver,
    Driver,
    DriverHost,
    TerminalDriver,
    TerminalInputFull,
)
from engine.effects.drivers.mcpconfig import (
    MCPService,
    MCPSetup,
    TokenFileUnreadable,
    write_token,
)
from engine.effects.drivers.scripted import ScriptedAgent
from engine.effects.drivers.terminal import PtyTerminal

__all__ = [
    "AgentDriver",
    "CommandAgent",
    "Driver",
    "DriverHost",
    "MCPService",
    "MCPSetup",
    "PtyTerminal",
    "ScriptedAgent",
    "TerminalDriver",
    "TerminalInputFull",
    "TokenFileUnreadable",
    "write_token",
]
