import { dangerViews, isBroadTarget, isRootOrHome, isSystemFile, looseCommands, operands, type TLooseCommand } from "./rule-commands";
import type { TPathScope } from "./rule-paths";
import { findScopeDanger } from "./rule-scope";
import type { TDanger, TDangerCategory } from "./danger";

type TCommandRule = { category: TDangerCategory; check: (command: TLooseCommand) => string | null };
type TLineRule = { category: TDangerCategory; re: RegExp; rationale: string };

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?|0\.0\.0\.0)$/i;
const NETWORK_TOOLS = new Set(["curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "rsync", "ssh", "ftp", "tftp", "http", "https", "xh", "dig", "nslookup", "host"]);
const PRIVATE_KEY = /(?:^|\/)id_(?:rsa|dsa|ecdsa|ed25519)(?!\.pub)\b|\/etc\/g?shadow\b|\.pem$|\.p12$|\.pfx$/;
const READERS = new Set(["cat", "less", "more", "head", "tail", "base64", "xxd", "od", "strings", "nl", "tac", "cp", "tar", "zip", "gpg"]);
const SECRET =
  /(?:~|\$\{?HOME\}?|\/home\/[^/\s]+|\/root)\/\.(?:ssh|aws|gnupg|kube|docker|config\/gcloud|netrc|npmrc|pypirc|pgpass|git-credentials)|(?:^|[\s/=@<])\.env(?:\.[\w-]+)?\b|\/etc\/(?:g?shadow|sudoers|master\.passwd)|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\$\{?[A-Z_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Z_]*\}?|\b(?:env|printenv)\s*\|/;
const SHELL_SINK = "\\|\\s*(?:sudo\\s+)?(?:[\\w./-]*/)?(?:(?:ba|z|da|k|fi)?sh|python[\\d.]*|perl|ruby|node)\\b";

const first = (items: string[], test: (item: string) => boolean) => items.find(test) ?? null;

function rmRule(c: TLooseCommand): string | null {
  if (c.name !== "rm") return null;
  if (c.args.includes("--no-preserve-root")) return "`rm --no-preserve-root` deletes the whole filesystem.";
  const recursive = c.args.some((a) => a === "--recursive" || /^-[a-zA-Z]*[rR]/.test(a));
  const targets = operands(c.args);
  const broad = recursive ? first(targets, isBroadTarget) : null;
  if (broad) return `\`rm\` recursively deletes \`${broad}\` (the root, home, workspace or a system directory).`;
  const system = first(targets, isSystemFile);
  return system ? `\`rm\` deletes the system file \`${system}\`.` : null;
}

function findDeleteRule(c: TLooseCommand): string | null {
  if (c.name !== "find") return null;
  const root = c.args[0] ?? "";
  const deletes = c.args.includes("-delete") || c.args.some((a, i) => /^-exec(?:dir)?$/.test(a) && /(?:^|\/)(?:rm|shred)$/.test(c.args[i + 1] ?? ""));
  return deletes && isRootOrHome(root) ? `\`find ${root}\` deletes files across \`${root}\`.` : null;
}

function permissionsRule(c: TLooseCommand): string | null {
  if (!/^ch(?:mod|own|grp)$/.test(c.name)) return null;
  const target = first(operands(c.args).slice(1), (t) => isRootOrHome(t) || isSystemFile(t));
  return target ? `\`${c.name}\` changes permissions or ownership of \`${target}\`.` : null;
}

function overwriteRule(c: TLooseCommand): string | null {
  const targets = operands(c.args);
  if (["cp", "mv", "install", "ln", "rsync"].includes(c.name)) {
    const last = targets[targets.length - 1] ?? "";
    if (c.name === "mv" && last === "/dev/null") return "`mv … /dev/null` discards files.";
    if (targets.length > 1 && (isSystemFile(last) || isRootOrHome(last))) return `\`${c.name}\` overwrites \`${last}\`.`;
  }
  const inPlace = c.name === "sed" && c.args.some((a) => /^-[a-zA-Z]*i|^--in-place/.test(a));
  if (inPlace || c.name === "tee" || c.name === "truncate") {
    const target = first(targets, isSystemFile);
    if (target) return `\`${c.name}\` modifies the system file \`${target}\`.`;
  }
  if (c.name === "dd") {
    const device = first(c.args, (a) => /^of=\/dev\/(?!null$|zero$|stdout$|stderr$|fd\/)/.test(a));
    if (device) return `\`dd ${device}\` writes raw data over a device.`;
  }
  return null;
}

function diskRule(c: TLooseCommand): string | null {
  if (/^mkfs(?:\.\w+)?$|^(?:mke2fs|mkswap|wipefs|sfdisk|shred|srm|wipe)$/.test(c.name)) return `\`${c.name}\` destroys data irreversibly.`;
  if (/^(?:fdisk|parted|sgdisk|gdisk)$/.test(c.name) && !c.args.includes("-l") && c.args.some((a) => a.startsWith("/dev/"))) {
    return `\`${c.name}\` repartitions a disk.`;
  }
  return null;
}

function systemRule(c: TLooseCommand): string | null {
  const verb = c.args[0] ?? "";
  if (/^(?:shutdown|reboot|halt|poweroff)$/.test(c.name) || (c.name === "init" && /^[06]$/.test(verb))) return `\`${c.name}\` stops the machine.`;
  if (c.name === "systemctl" && /^(?:poweroff|reboot|halt|kexec)$/.test(verb)) return `\`systemctl ${verb}\` stops the machine.`;
  if ((c.name === "kill" && c.args.includes("-1")) || c.name === "killall5") return "The command kills every process of the user.";
  if (c.name === "crontab" && c.args.includes("-r")) return "`crontab -r` deletes every scheduled job.";
  return null;
}

function forcePushRule(c: TLooseCommand): string | null {
  if (c.name !== "git" || !c.args.includes("push")) return null;
  if (c.args.includes("--mirror")) return "`git push --mirror` overwrites every branch of the remote.";
  const force = c.args.some((a) => /^--force|^-[a-zA-Z]*f[a-zA-Z]*$|^\+/.test(a));
  const deletes = c.args.includes("--delete") || c.args.includes("-d") || c.args.some((a) => /^:(?:refs\/heads\/)?(?:main|master)$/.test(a));
  const main = c.args.some((a) => /(?:^|[:+/])(?:main|master)$/.test(a));
  return main && (force || deletes) ? "The command force-pushes or deletes the shared main branch, rewriting history others depend on." : null;
}

function uploadRule(c: TLooseCommand): string | null {
  const hosts = c.args.map((a) => /^(?:https?|ftps?):\/\/([^/:?#\s]+|\[[^\]]+\])/i.exec(a)?.[1]).filter((h): h is string => !!h);
  if (hosts.length > 0 && hosts.every((h) => LOOPBACK.test(h))) return null;
  if (c.name === "curl") {
    const upload = c.args.some((a, i) => {
      if (/^(?:-[a-zA-Z]*T|--upload-file)/.test(a)) return true;
      const value = /^(?:-[a-zA-Z]*[dF]|--data(?:-binary|-raw|-urlencode|-ascii)?|--form(?:-string)?|--json)$/.test(a)
        ? (c.args[i + 1] ?? "")
        : (/^(?:--(?:data[\w-]*|form|json)=|-[dF])(.+)$/.exec(a)?.[1] ?? "");
      return /^@|=@|^<|=</.test(value);
    });
    if (upload) return "`curl` uploads a local file or piped data to a remote host.";
  }
  if (c.name === "wget" && c.args.some((a) => /^--(?:post|body)-file/.test(a))) return "`wget` uploads a local file to a remote host.";
  if ((c.name === "scp" || c.name === "rsync") && operands(c.args).length > 1) {
    const last = operands(c.args).at(-1) ?? "";
    if (/^(?:[\w.-]+@)?[\w.-]+:(?!\/\/)|^rsync:\/\//.test(last) && !/^\.{0,2}\//.test(last)) return `\`${c.name}\` copies local files to the remote \`${last}\`.`;
  }
  if (/^(?:nc|ncat|netcat)$/.test(c.name) && c.args.some((a) => /^-[a-zA-Z]*[ec]$/.test(a))) return `\`${c.name} -e\` hands a shell to a remote host.`;
  if (READERS.has(c.name) && c.args.some((a) => PRIVATE_KEY.test(a))) return "The command reads a private key or password hashes.";
  return null;
}

function setuidRule(c: TLooseCommand): string | null {
  const mode = operands(c.args)[0] ?? "";
  if (c.name === "chmod" && (/^[ugoa]*[+=][rwxXt]*s/.test(mode) || /^[0-7]*[2467][0-7]{3}$/.test(mode))) return `\`chmod ${mode}\` sets a setuid or setgid bit.`;
  if (/^ch(?:own|grp)$/.test(c.name) && /^(?:root|0)(?::|$)/.test(mode)) return `\`${c.name} ${mode}\` hands files to root.`;
  return null;
}

function privilegeRule(c: TLooseCommand): string | null {
  if (/^(?:sudo|su|doas|pkexec|runuser|sudoedit)$/.test(c.name)) return `\`${c.name}\` runs commands with elevated privileges.`;
  if (/^(?:visudo|useradd|usermod|userdel|adduser|groupadd|groupmod|passwd|chpasswd|gpasswd|vipw|vigr|setcap|nsenter)$/.test(c.name)) {
    return `\`${c.name}\` changes users, groups or process privileges.`;
  }
  if (/^(?:docker|podman)$/.test(c.name) && /^(?:run|create|exec)$/.test(c.args[0] ?? "")) {
    const joined = c.args.join(" ");
    if (/--privileged|--pid[= ]host|--cap-add[= ](?:all|sys_admin)|(?:-v|--volume)[= ]\/:|source=\/(?:,|\s|$)/i.test(joined)) {
      return `\`${c.name}\` starts a container with access to the host as root.`;
    }
  }
  return null;
}

const COMMAND_RULES: TCommandRule[] = [
  { category: "destructive", check: rmRule },
  { category: "destructive", check: findDeleteRule },
  { category: "privilege escalation", check: setuidRule },
  { category: "destructive", check: permissionsRule },
  { category: "destructive", check: overwriteRule },
  { category: "destructive", check: diskRule },
  { category: "destructive", check: systemRule },
  { category: "destructive", check: forcePushRule },
  { category: "exfiltration", check: uploadRule },
  { category: "privilege escalation", check: privilegeRule },
];

const LINE_RULES: TLineRule[] = [
  { category: "privilege escalation", re: /\/etc\/sudoers|\bsudoers\.d\b/, rationale: "The command touches the sudoers configuration." },
  { category: "destructive", re: /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&|\b(\w+)\s*\(\s*\)\s*\{[^}]*\b\1\s*\|\s*\1\s*&/, rationale: "The command is a fork bomb." },
  { category: "destructive", re: />\s*\/dev\/(?:sd[a-z]|nvme|hd[a-z]|vd[a-z]|xvd|mmcblk|disk\d|mapper\/|md\d|dm-)/, rationale: "The command overwrites a block device." },
  { category: "destructive", re: />{1,2}\s*\/(?:etc|boot|usr|bin|sbin|lib\w*|var\/lib|var\/log|sys|proc)\//, rationale: "The command overwrites a system file through a redirection." },
  { category: "exfiltration", re: /\/dev\/(?:tcp|udp)\//, rationale: "The command opens a raw network connection through /dev/tcp or /dev/udp." },
  { category: "exfiltration", re: /\|\s*(?:[\w./-]*\/)?(?:nc|ncat|netcat|socat|telnet)\b|\b(?:nc|ncat|netcat|socat)\b[^;&|\n]*<\s*\S/, rationale: "The command sends data to a raw network socket." },
  { category: "exfiltration", re: /\bsocat\b[^;&|\n]*\b(?:FILE|OPEN|GOPEN|EXEC|SYSTEM):[^;&|\n]*\b(?:TCP|UDP|SSL|OPENSSL|SCTP)[46]?(?:-CONNECT)?:/i, rationale: "`socat` connects a local file or program to a remote host." },
  { category: "remote code", re: new RegExp(`\\b(?:curl|wget)\\b[^;&\\n]*${SHELL_SINK}|\\b(?:ba|z)?sh\\s+<\\(\\s*(?:curl|wget)\\b`), rationale: "The command runs code downloaded from the network." },
  { category: "remote code", re: new RegExp(`\\bbase64\\s+(?:-d|--decode|-D)\\b[^;&\\n]*${SHELL_SINK}`), rationale: "The command decodes and runs hidden code." },
  {
    category: "remote code",
    re: /(?:\beval|\b(?:ba|z|da|k)?sh\s+-[a-z]*c)\s+["']?(?:\$\(|`)\s*(?:curl|wget)\b/,
    rationale: "The command runs code downloaded from the network.",
  },
  {
    // `sh -c "$(echo … | base64 -d)"`, `eval …`, or a decoded word run as the command itself.
    category: "remote code",
    re: /(?:(?:\beval|\b(?:ba|z|da|k)?sh\s+-[a-z]*c)\s+["']?|(?:^|[;&|\n]\s*)["']?)(?:\$\(|`)[^)`]*\b(?:base64\s+(?:-d|--decode|-D)|xxd\s+-r)\b/,
    rationale: "The command decodes and runs hidden code.",
  },
];

/**
 * The first dangerous pattern in a command, or null. With a scope, changes outside the workspace,
 * uploads of files from outside it and reads of credential stores are dangerous too.
 */
export function findDanger(command: string, scope?: TPathScope): TDanger | null {
  for (const view of dangerViews(command)) {
    const commands = looseCommands(view);
    for (const rule of LINE_RULES) if (rule.re.test(view)) return { category: rule.category, rationale: rule.rationale };
    for (const rule of COMMAND_RULES) {
      for (const c of commands) {
        const rationale = rule.check(c);
        if (rationale) return { category: rule.category, rationale };
      }
    }
    // An ssh or scp identity file (`-i ~/.ssh/key`) is used, not sent; anything else secret next to a network tool is.
    const withoutIdentity = view.replace(/\s-i\s+\S+/g, " ");
    if (commands.some((c) => NETWORK_TOOLS.has(c.name)) && SECRET.test(withoutIdentity)) {
      return { category: "exfiltration", rationale: "The command sends credentials or secrets (SSH keys, .env files, tokens, /etc/shadow) over the network." };
    }
  }
  return scope ? findScopeDanger(command, scope) : null;
}
