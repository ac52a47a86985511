"""The system rules: packages, power, processes, disks, mounts, the firewall, accounts, schedules, services,
kernel settings. A model working on a project has no business here unasked."""

from __future__ import annotations

from tools.guard.places import Places
from tools.guard.rules_files import Flag, Rule, operands
from tools.guard.scanner import ASK, REFUSE

_REMOVAL_VERBS = {"remove", "purge", "autoremove", "erase", "uninstall", "del", "rm"}
_PACKAGE_TOOLS = {"apt", "apt-get", "aptitude", "yum", "dnf", "zypper", "apk", "snap", "brew", "pip", "pip3",
                  "conda", "mamba", "npm", "pnpm", "yarn", "gem", "cargo", "flatpak", "uv"}
_LISTING = {"-l", "--list", "-L", "-S", "--list-rules", "-n", "--numeric", "-v", "--verbose", "-h", "--help"}


def _packages(args: list[str], places: Places, command: str, flag: Flag) -> None:
    words = operands(args)
    if command.split(maxsplit=1)[0].endswith(("npm", "pnpm", "yarn")) and "-g" not in args and "--global" not in args:
        return  # removing a project dependency only edits the project
    if words and words[0] in _REMOVAL_VERBS:
        flag(ASK, "package-removal", f"`{command}` removes installed packages")


def _dpkg_pacman(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if {"-r", "-P", "--remove", "--purge"} & set(args) or any(a.startswith("-R") for a in args):
        flag(ASK, "package-removal", f"`{command}` removes installed packages")


def _power(args: list[str], places: Places, command: str, flag: Flag) -> None:
    flag(REFUSE, "shutdown", f"`{command}` shuts down or restarts the machine")


def _systemctl(args: list[str], places: Places, command: str, flag: Flag) -> None:
    verb = (operands(args) or [""])[0]
    if verb in ("0", "6", "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate"):
        flag(REFUSE, "shutdown", f"`{command}` shuts down or restarts the machine")
    elif verb in ("stop", "disable", "mask", "kill", "isolate", "daemon-reexec", "emergency", "rescue"):
        flag(ASK, "service-control", f"`{command}` stops or disables system services")


def _service(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if len(args) > 1 and args[1] in ("stop", "restart", "force-reload"):
        flag(ASK, "service-control", f"`{command}` stops a system service")


def _kill(args: list[str], places: Places, command: str, flag: Flag) -> None:
    signalled = args[1:] if args and args[0].startswith("-") else args  # the first option is the signal
    pids = args[args.index("--") + 1:] if "--" in args else signalled
    if "-1" in pids or "1" in pids:
        flag(REFUSE, "kill-all", f"`{command}` signals every process you own (or init)")


def _killall5(args: list[str], places: Places, command: str, flag: Flag) -> None:
    flag(REFUSE, "kill-all", f"`{command}` signals every process")


def _mkfs(args: list[str], places: Places, command: str, flag: Flag) -> None:
    flag(REFUSE, "mkfs", f"`{command}` formats a file system, destroying what it held")


def _partition(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if "-l" not in args and "--list" not in args:
        flag(ASK, "partition-table", f"`{command}` edits a disk's partition table")


def _mount(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if command.split(maxsplit=1)[0].endswith("mount") and not (set(args) - _LISTING - {"-a"} or "-a" in args):
        return  # `mount` alone lists the mounts
    flag(ASK, "mount", f"`{command}` changes what is mounted where")


def _firewall(args: list[str], places: Places, command: str, flag: Flag) -> None:
    words = operands(args)
    if set(args) <= _LISTING or words[:1] in (["list"], ["status"], ["show"]) or \
            all(a.startswith(("--list", "--state", "--get", "--query")) for a in args):
        return
    flag(ASK, "firewall", f"`{command}` changes the firewall (it can cut the machine off the network)")


def _accounts(args: list[str], places: Places, command: str, flag: Flag) -> None:
    flag(ASK, "user-accounts", f"`{command}` changes user accounts (`userdel -r` deletes a home folder)")


def _crontab(args: list[str], places: Places, command: str, flag: Flag) -> None:
    if any(a.startswith("-") and "r" in a for a in args):
        flag(ASK, "crontab-remove", f"`{command}` deletes the crontab")
    elif args and not set(args) <= {"-l", "-u"} | set(args[args.index("-u") + 1:][:1] if "-u" in args else []):
        flag(ASK, "crontab", f"`{command}` installs commands that run on a schedule, outside the run")


def _kernel(args: list[str], places: Places, command: str, flag: Flag) -> None:
    name = command.split(maxsplit=1)[0].rsplit("/", 1)[-1]
    if name == "sysctl" and not ("-w" in args or any("=" in a for a in args)):
        return
    flag(ASK, "kernel-settings", f"`{command}` changes the running kernel (modules or settings)")


def _network(args: list[str], places: Places, command: str, flag: Flag) -> None:
    words = operands(args)
    changes = {"down", "del", "delete", "flush", "add", "set", "change", "replace"} & set(words)
    if command.split(maxsplit=1)[0].endswith(("ifdown", "ifup")) or changes:
        flag(ASK, "network-config", f"`{command}` changes the network configuration")


SYSTEM_RULES: dict[str, Rule] = {
    "dpkg": _dpkg_pacman, "pacman": _dpkg_pacman,
    "shutdown": _power, "reboot": _power, "halt": _power, "poweroff": _power,
    "init": _systemctl, "telinit": _systemctl, "systemctl": _systemctl, "service": _service,
    "kill": _kill, "killall5": _killall5,
    "mkfs": _mkfs, "mke2fs": _mkfs, "mkswap": _mkfs, "wipefs": _mkfs, "mkntfs": _mkfs, "mkdosfs": _mkfs,
    "fdisk": _partition, "sfdisk": _partition, "parted": _partition, "gdisk": _partition, "sgdisk": _partition,
    "mount": _mount, "umount": _mount, "swapon": _mount, "swapoff": _mount, "losetup": _mount,
    "iptables": _firewall, "ip6tables": _firewall, "iptables-legacy": _firewall, "iptables-nft": _firewall,
    "nft": _firewall, "ufw": _firewall, "firewall-cmd": _firewall,
    **dict.fromkeys(("userdel", "deluser", "useradd", "adduser", "usermod", "groupdel", "delgroup", "groupmod",
                     "passwd", "chpasswd", "chsh", "chage", "vipw", "visudo"), _accounts),
    "crontab": _crontab,
    "modprobe": _kernel, "insmod": _kernel, "rmmod": _kernel, "sysctl": _kernel,
    "ip": _network, "ifconfig": _network, "ifdown": _network, "ifup": _network, "route": _network,
    **dict.fromkeys(_PACKAGE_TOOLS, _packages),
}
