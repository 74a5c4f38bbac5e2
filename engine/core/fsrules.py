"""Which workspace paths are secret or protected (SPEC §8.3).

Names compare case-insensitively after Unicode NFC normalisation (casefold,
then NFC again), so ``CLAUDE.md``, ``claude.MD`` and a decomposed spelling
of a name are the same name. Every component of a path is looked at: a
``.git`` or ``CLAUDE.md`` anywhere in the tree is protected, and so is everything in
a workspace folder that itself lies in one (``above``).

A workspace may sit on a filesystem laxer than Linux's own, so names are also
compared as those see them: FAT and SMB/NTFS drop trailing dots and spaces
(``CLAUDE.md.`` creates ``CLAUDE.md``), HFS+ ignores zero-width characters
(``.git\u200c`` is ``.git``), NTFS and exFAT compare upper-cased names (``.gıt``, with
a dotless ``ı``, may be ``.GIT``), and FAT answers to a short name (``GIT~1``), which
counts as every protected or secret name it could stand for.

Which workspace folders are unsafe asks the operating system (``fstatfs``,
``/proc/self/mountinfo``), so it is an effect: `engine.effects.folders`.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import unicodedata

__all__ = ["PROTECTED_NAMES", "SECRET_PATTERNS", "fold", "is_protected", "is_secret"]

#: Secret-like file names (shell patterns over folded names).
SECRET_PATTERNS = (".env", ".env.*", "credentials*", "aws-credentials", "*.pem", "*.key",
                   "*.pfx", "*.p12", "*.ppk", "id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*",
                   ".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass",
                   "*.tfstate", "*.tfstate.*",
                   # Where common tools keep a token, a password or a private key.
                   ".dev.vars", ".vault-token", ".s3cfg", ".boto", ".terraformrc",
                   "terraform.rc", ".dockercfg", ".my.cnf", ".htpasswd",
                   "application_default_credentials.json", "service-account*.json", "*.jks",
                   "*.keystore", "authkey_*.p8", "*.kdbx",
                   # Shells' and interpreters' histories: a pasted password, an
                   # ``export TOKEN=...`` stays there.
                   ".*_history", ".histfile", ".zhistory", "fish_history", ".lesshst",
                   # A git worktree's own settings, as ``.git/config`` (`_SECRET_PAIRS`).
                   "config.worktree")
#: Folders that are secret with everything inside them (Firefox's and Thunderbird's
#: profiles: saved passwords, cookies and the keys that open them).
_SECRET_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".azure", ".mozilla", ".thunderbird"})
#: (folder, name) pairs that are secret, and everything inside the name when it is a
#: folder: ``.docker/config.json``, ``.kube/config``, Streamlit's ``secrets.toml``, the
#: GitHub CLI's ``gh/hosts.yml``; git's settings (a remote's URL holds a token as often
#: as not; the rest of ``.git`` is readable); the browsers' profiles where each keeps
#: them (under ``~/.config``; macOS's and Windows's folders); the gcloud CLI's tokens.
_SECRET_PAIRS = frozenset({
    (".docker", "config.json"), (".kube", "config"), (".streamlit", "secrets.toml"),
    ("gh", "hosts.yml"), (".git", "config"),
    (".config", "google-chrome"), (".config", "chromium"), (".config", "bravesoftware"),
    (".config", "microsoft-edge"), (".config", "vivaldi"), (".config", "opera"),
    ("google", "chrome"), ("firefox", "profiles"), ("thunderbird", "profiles"),
    (".config", "gcloud"), ("roaming", "gcloud")})

#: Protected names (folded): a path with any of them as a component is protected.
PROTECTED_NAMES = frozenset({
    # Version control.
    ".git",
    # Agent instructions and settings.
    ".claude", "claude.md", "claude.local.md", ".mcp.json", "agents.md", "agent.md",
    "gemini.md", ".gemini", ".cursor", ".cursorrules", ".codex", ".clinerules", ".windsurf",
    ".windsurfrules", ".roo", ".roomodes", ".kiro", ".goosehints", ".continue", ".junie",
    ".amazonq", ".augment", ".opencode", "opencode.json", ".zed",
    # ... and those other agents load from a project by themselves: Codex's override
    # (read before AGENTS.md), Zed's first rule file, Qwen Code's, Crush's (its JSON
    # settings start MCP servers), Warp's, OpenCode's JSONC settings, Roo's rule
    # files, Kilo Code's, Trae's, Augment's and Factory's.
    "agents.override.md", ".rules", "qwen.md", ".qwen", "crush.md", "crush.local.md",
    "crush.json", ".crush.json", ".crush", "warp.md", "opencode.jsonc", ".roorules",
    ".kilocode", ".trae", ".augment-guidelines", ".factory",
    # Editor settings, and the editor files that run when a folder is opened (vim's and
    # Neovim's exrc, Helix's language servers, Emacs's directory variables).
    ".vscode", ".idea", ".fleet", ".vs", ".theia", ".exrc", ".nvimrc", ".nvim.lua", ".helix",
    ".dir-locals.el",
    # Files that run on their own.
    ".envrc", ".devcontainer", ".devcontainer.json", ".husky", ".pre-commit-config.yaml",
    ".git-hooks", ".githooks", ".lefthook", "lefthook.yml", ".lefthook.yml", ".github",
    ".gitlab-ci.yml", ".circleci", ".buildkite", "jenkinsfile", ".travis.yml",
    "azure-pipelines.yml",
    # ... and other CI services' (Gitea's and Forgejo's Actions, the files .gitlab-ci.yml
    # includes, Bitbucket, Drone, Woodpecker, AppVeyor, Cirrus, Semaphore, CodeBuild) and
    # Gitpod's tasks, which run as a workspace starts.
    ".gitea", ".forgejo", ".gitlab", "bitbucket-pipelines.yml", ".drone.yml", ".woodpecker",
    ".woodpecker.yml", ".woodpecker.yaml", "appveyor.yml", ".appveyor.yml", ".cirrus.yml",
    ".cirrus.star", ".semaphore", "buildspec.yml", ".gitpod.yml",
    # What a shell, git or an editor runs by itself from the home folder, where a
    # dotfiles folder made a workspace puts them (linked or copied there).
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".gitconfig", ".vimrc", ".tmux.conf",
    # The app's own data.
    ".arrowgate",
    # The desktop's trash ($topdir/.Trash, $topdir/.Trash-$uid): each .trashinfo
    # names where a person's "Restore" puts its item back, any path at all.
    ".trash",
})
#: The desktop's own trash, ``$XDG_DATA_HOME/Trash`` where it is by default: protected as
#: ``.Trash`` is, wherever along the workspace folder's path and the call's it stands.
_HOME_TRASH = (".local", "share", "trash")
#: VS Code's workspace files (``*.code-workspace``) hold settings and tasks, as ``.vscode/``.
_PROTECTED_PATTERNS = (".aider*", ".trash-*", ".roorules-*", "*.code-workspace")

# Unicode's default-ignorable code points: some filesystems (HFS+) skip them in names.
_IGNORABLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
                        "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f"
                        "\ufeff\uffa0\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                        "\U000e0000-\U000e0fff]")
# A FAT short name: up to six characters of the long name, ``~N``, up to three of its end.
_SHORT_NAME = re.compile(r"([^.~]{1,6})~[0-9]+(?:\.[^.]{0,3})?")


def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One expression matching a name any of the shell ``patterns`` matches (as
    ``fnmatch.fnmatchcase``): a trash scan judges up to 100,000 names, each against every
    pattern."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


#: `SECRET_PATTERNS` and `_PROTECTED_PATTERNS`, each as one expression.
_SECRET_MATCH = _any_of(SECRET_PATTERNS)
_PROTECTED_MATCH = _any_of(_PROTECTED_PATTERNS)


def _squash(name: str) -> str:
    # What a short name keeps of a long one: no dots or spaces, ``+,;=[]`` as ``_``.
    return re.sub(r"[+,;=\[\]]", "_", re.sub(r"[. ]", "", name))


#: Literal names a FAT short name may stand for, squashed, with the set each is in.
_PROTECTED_SQUASHED = tuple((_squash(n), n) for n in sorted(PROTECTED_NAMES | {".aider"}))
_SECRET_SQUASHED = tuple((_squash(n), n) for n in sorted(
    _SECRET_DIRS | {p.rstrip("*.") for p in SECRET_PATTERNS if not p.startswith("*")}))


@functools.lru_cache(maxsize=8192)
def fold(name: str) -> str:
    """A name as it is compared: NFC, without ignorable characters, upper-cased and then
    case-folded, NFC again, without trailing dots and spaces. Remembered: a scan judges
    each entry's whole path, the same folders' names again and again."""
    name = _IGNORABLE.sub("", unicodedata.normalize("NFC", name))
    # Upper-cased first: NTFS and exFAT compare names by a volume's up-case table, and
    # where that follows Unicode's upper case the dotless ``ı`` is ``I`` (``.gıt`` is
    # ``.git``), which case folding alone leaves apart. For every other character the
    # two agree.
    return unicodedata.normalize("NFC", name.upper().casefold()).rstrip(". ")


def _short_for(low: str, squashed: tuple[tuple[str, str], ...]) -> bool:
    """Whether the folded ``low`` is a FAT short name one of ``squashed`` may have."""
    match = _SHORT_NAME.fullmatch(low)
    return match is not None and any(s.startswith(match.group(1)) for s, _n in squashed)


def is_secret(parts: list[str] | tuple[str, ...], *,
              above: list[str] | tuple[str, ...] = ()) -> bool:
    """A secret-like name anywhere in the path, or anything inside a secret folder.

    ``above``: the folders the path's first folder lies in (the workspace folder's own
    path). A file there is inside ``.ssh`` whichever folder was made the workspace: a
    secret folder among them makes every path secret, and a secret pair anywhere along
    them and the path counts (``~/.docker`` made a workspace: ``config.json``;
    ``~/.config/gcloud`` made one: everything in it). File-name
    patterns are not applied to them: a project named ``credentials-service`` is one.
    """
    outer = [fold(p) for p in above]
    if any(part in _SECRET_DIRS for part in outer):
        return True
    low = [fold(p) for p in parts]
    chain = outer + low
    # A pair anywhere along the whole path: ``~/.config`` made a workspace holds
    # ``gcloud/``, and ``~/.config/gcloud`` made one holds its tokens.
    if any(pair in _SECRET_PAIRS for pair in zip(chain, chain[1:])):
        return True
    if _git_settings(chain):
        return True
    for part in low:
        if part in _SECRET_DIRS or _short_for(part, _SECRET_SQUASHED):
            return True
        if _SECRET_MATCH.match(part):
            return True
    return False


def _git_settings(chain: list[str]) -> bool:
    """A submodule's git settings, ``.git/modules/<name>/config`` (its name may be a
    path, ``vendor/lib``; nested: ``modules/a/modules/b/config``), as ``.git/config``
    (`_SECRET_PAIRS`): its remote's URL may hold a token. Any ``config`` beneath
    ``.git/modules`` counts, a submodule's branch of that name too; one of the project's
    own branches (``.git/refs/heads/config``) does not."""
    for i, low in enumerate(chain[:-2]):
        if low == ".git" and chain[i + 1] == "modules" and "config" in chain[i + 3:]:
            return True
    return False


def is_protected(parts: list[str] | tuple[str, ...], *,
                 above: list[str] | tuple[str, ...] = ()) -> bool:
    """Under .git, agent instructions or settings, editor settings, CI, hooks, or app data.

    ``above``: the folders the path's first folder lies in (the workspace folder's own
    path), judged alike: a file in a project's ``.git/hooks`` is protected whichever
    folder was made the workspace, and so is ``~/.local/share/Trash`` whether
    ``~/.local``, ``~/.local/share`` or the trash itself was.
    """
    chain = [fold(part) for part in (*above, *parts)]
    for low in chain:
        if low in PROTECTED_NAMES or _short_for(low, _PROTECTED_SQUASHED) or (
                _PROTECTED_MATCH.match(low)):
            return True
    return any(tuple(chain[i:i + len(_HOME_TRASH)]) == _HOME_TRASH for i in range(len(chain)))
