"""Drivers: the real agents and terminals behind the canvas's nodes."""

from __future__ import annotations

from .agent import CommandAgent
from .base import AgentDriver, Driver, DriverHost, TerminalDriver
from .mcpconfig import MCPService, MCPSetup, write_token
from .scripted import ScriptedAgent
from .terminal import PtyTerminal

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
    "write_token",
]
