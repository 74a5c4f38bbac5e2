"""Which workspace paths are secret or protected (SPEC §8.3).

Names compare case-insensitively after Unicode NFC normalisation (casefold,
then NFC again), so ``CLAUDE.md``, ``claude.MD`` and a decomposed spelling
of a name are the same name. Every component of a path is looked at: a
``.git`` or ``CLAUDE.md`` anywhere in the tree is protected.

Which workspace folders are unsafe asks the operating system (``fstatfs``,
``/proc/self/mountinfo``), so it is an effect: `engine.effects.folders`.
"""

from __future__ import annotations

import fnmatch
import unicodedata

__all__ = ["PROTECTED_NAMES", "SECRET_PATTERNS", "fold", "is_protected", "is_secret"]

#: Secret-like file names (shell patterns over folded names).
SECRET_PATTERNS = (".env", ".env.*", "credentials*", "aws-credentials", "*.pem", "*.key",
                   "*.pfx", "*.p12", "*.ppk", "id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*",
                   ".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass",
                   "*.tfstate", "*.tfstate.*")
#: Folders that are secret with everything inside them.
_SECRET_DIRS = frozenset({".ssh", ".aws", ".gnupg"})
#: (folder, name) pairs that are secret: ``.docker/config.json``, ``.kube/config``.
_SECRET_PAIRS = frozenset({(".docker", "config.json"), (".kube", "config")})

#: Protected names (folded): a path with any of them as a component is protected.
PROTECTED_NAMES = frozenset({
    # Version control.
    ".git",
    # Agent instructions and settings.
    ".claude", "claude.md", "claude.local.md", ".mcp.json", "agents.md", "agent.md",
    "gemini.md", ".gemini", ".cursor", ".cursorrules", ".codex", ".clinerules", ".windsurf",
    ".windsurfrules", ".roo", ".roomodes", ".kiro", ".goosehints", ".continue", ".junie",
    ".amazonq", ".augment", ".opencode", "opencode.json", ".zed",
    # Editor settings.
    ".vscode", ".idea",
    # Files that run on their own.
    ".envrc", ".devcontainer", ".devcontainer.json", ".husky", ".pre-commit-config.yaml",
    ".git-hooks", ".githooks", ".lefthook", "lefthook.yml", ".lefthook.yml", ".github",
    ".gitlab-ci.yml", ".circleci", ".buildkite", "jenkinsfile", ".travis.yml",
    "azure-pipelines.yml",
    # The app's own data.
    ".arrowgate",
})
_PROTECTED_PATTERNS = (".aider*",)


def fold(name: str) -> str:
    """A name as it is compared: NFC, case-folded, NFC again."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def is_secret(parts: list[str] | tuple[str, ...]) -> bool:
    """A secret-like name anywhere in the path, or anything inside a secret folder."""
    low = [fold(p) for p in parts]
    for i, part in enumerate(low):
        if part in _SECRET_DIRS:
            return True
        if any(fnmatch.fnmatchcase(part, p) for p in SECRET_PATTERNS):
            return True
        if i and (low[i - 1], part) in _SECRET_PAIRS:
            return True
    return False


def is_protected(parts: list[str] | tuple[str, ...]) -> bool:
    """Under .git, agent instructions or settings, editor settings, CI, hooks, or app data."""
    for part in parts:
        low = fold(part)
        if low in PROTECTED_NAMES or any(fnmatch.fnmatchcase(low, p)
                                         for p in _PROTECTED_PATTERNS):
            return True
    return False
