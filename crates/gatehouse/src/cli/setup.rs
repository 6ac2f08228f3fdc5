//! `gatehouse setup`: writes a starting config from a preset (Assistant, Permissive, Hardened,
//! Custom), after the person has read what it does and agreed.
//!
//! In a terminal it asks (the preset, the workspace, Custom's settings, then consent, typed as
//! `yes`); from a script every answer is a flag and `--yes` is the consent. It never replaces a
//! config without first copying it to a backup that did not exist before, and it writes the new
//! one atomically (a temporary file renamed over it) with mode 0600.

mod presets;

use std::fs::OpenOptions;
use std::io::{BufRead, IsTerminal as _, Write};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use gatehouse_sandbox::{BwrapBinary, Isolation, SandboxMode, check_settings, probe};

use presets::{Preset, Settings};

/// Flags of `gatehouse setup`.
#[derive(Debug, clap::Args)]
pub(crate) struct SetupArgs {
    /// Where to write the config.
    #[arg(
        long,
        value_name = "FILE",
        env = "GATEHOUSE_CONFIG",
        default_value = "gatehouse.json5"
    )]
    config: PathBuf,
    /// The starting point; asked in a terminal when absent.
    #[arg(long, value_enum)]
    preset: Option<Preset>,
    /// The agents' workspace (absolute or `~/…`); asked in a terminal when absent.
    #[arg(long, value_name = "DIR")]
    workspace: Option<String>,
    /// Custom: which sessions are sandboxed (`off`, `non-main`, `all`).
    #[arg(long, value_name = "MODE")]
    sandbox: Option<String>,
    /// Custom: what a sandboxed run sees and keeps (`home`, `autodocs-read`, `autodocs-write`,
    /// `volumes`, `ephemeral`).
    #[arg(long, value_name = "ISOLATION")]
    isolation: Option<String>,
    /// Custom: let sandboxed runs use the network.
    #[arg(long)]
    network: bool,
    /// Consent to the preset's effects without being asked (for scripts).
    #[arg(long)]
    yes: bool,
    /// Ask every question even when stdin is not a terminal.
    #[arg(long)]
    interactive: bool,
}

/// The workspace offered when none is given.
const DEFAULT_WORKSPACE: &str = "~/agents/main";

/// Runs the subcommand.
pub(crate) fn run(args: SetupArgs) -> anyhow::Result<ExitCode> {
    let interactive = args.interactive || std::io::stdin().is_terminal();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = std::io::stdout().lock();
    let mut asker = Asker {
        input: &mut input,
        output: &mut output,
        interactive,
    };
    setup(&args, &mut asker)
}

/// Questions to a person, or refusals naming the flag when nobody is there to answer.
struct Asker<'a> {
    input: &'a mut dyn BufRead,
    output: &'a mut dyn Write,
    interactive: bool,
}

impl Asker<'_> {
    /// The answer to `question`, `default` when empty; `Err` naming `flag` when not asking.
    fn ask(&mut self, question: &str, default: &str, flag: &str) -> anyhow::Result<String> {
        if !self.interactive {
            bail!("{flag} is required when stdin is not a terminal (or pass --interactive)");
        }
        write!(self.output, "{question} [{default}]: ")?;
        self.output.flush()?;
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            bail!("no answer to {question:?} (end of input)");
        }
        let answer = line.trim();
        Ok(if answer.is_empty() { default } else { answer }.to_owned())
    }

    /// Asks until the answer parses.
    fn choose<T>(
        &mut self,
        question: &str,
        default: &str,
        flag: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> anyhow::Result<T> {
        loop {
            let answer = self.ask(question, default, flag)?;
            match parse(&answer) {
                Ok(value) => return Ok(value),
                Err(why) => writeln!(self.output, "{why}")?,
            }
        }
    }

    fn say(&mut self, text: &str) -> anyhow::Result<()> {
        writeln!(self.output, "{text}")?;
        Ok(())
    }
}

fn setup(args: &SetupArgs, asker: &mut Asker<'_>) -> anyhow::Result<ExitCode> {
    asker.say("Gatehouse setup writes a starting config for the gateway.")?;
    let preset = match args.preset {
        Some(preset) => preset,
        None => {
            asker.say("")?;
            for (number, preset) in Preset::ALL.iter().enumerate() {
                asker.say(&format!(
                    "  {}) {:<11} {}",
                    number + 1,
                    preset.name(),
                    preset.blurb()
                ))?;
            }
            asker.choose("Preset", "1", "--preset", parse_preset)?
        }
    };
    let workspace = match &args.workspace {
        Some(workspace) => workspace.clone(),
        None => asker.choose(
            "Workspace (where agents' commands may write)",
            DEFAULT_WORKSPACE,
            "--workspace",
            |raw| check_path(raw).map(|()| raw.to_owned()),
        )?,
    };
    check_path(&workspace).map_err(anyhow::Error::msg)?;
    let mut settings = preset.settings(workspace);
    if preset == Preset::Custom {
        custom(args, asker, &mut settings)?;
    }
    let user = std::env::var("USER").unwrap_or_else(|_| "this user".to_owned());
    asker.say(&format!(
        "\nThis writes {} (preset {}). With it:",
        args.config.display(),
        preset.name()
    ))?;
    for effect in settings.effects(&user) {
        asker.say(&format!("  - {effect}"))?;
    }
    if settings.mode != SandboxMode::Off {
        asker.say(&format!(
            "  - The workspace {} is created (mode 0700) if it does not exist.",
            settings.workspace
        ))?;
        let report = probe(&BwrapBinary::OnPath, std::env::var_os("PATH").as_deref());
        let mark = if report.is_ok() { "-" } else { "!" };
        asker.say(&format!("  {mark} Here: {report}"))?;
    }
    if args.config.exists() {
        asker.say(&format!(
            "  - The existing {} is copied to a backup first.",
            args.config.display()
        ))?;
    }
    if !args.yes {
        if !asker.interactive {
            asker.say("Nothing was written: pass --yes to agree to the above.")?;
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
        let answer = asker.ask("Write it? Type yes to agree", "no", "--yes")?;
        if answer != "yes" {
            asker.say("Nothing was written.")?;
            return Ok(ExitCode::from(1));
        }
    }
    let backup = write_config(&args.config, &settings.config_text(preset))?;
    if let Some(backup) = backup {
        asker.say(&format!(
            "Backed up the old config to {}.",
            backup.display()
        ))?;
    }
    if settings.mode != SandboxMode::Off {
        prepare_workspace(&settings, asker)?;
    }
    asker.say(&format!(
        "Wrote {}. Check it with `gatehouse doctor --config {0}`; start the gateway with \
         `gatehouse serve --config {0}`.",
        args.config.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Custom's questions, each answered by its flag when given.
fn custom(args: &SetupArgs, asker: &mut Asker<'_>, settings: &mut Settings) -> anyhow::Result<()> {
    settings.mode = match &args.sandbox {
        Some(mode) => mode.parse().map_err(anyhow::Error::new)?,
        None => asker.choose(
            "Sandbox mode (off, non-main, all)",
            settings.mode.as_str(),
            "--sandbox",
            |raw| {
                raw.parse::<SandboxMode>()
                    .map_err(|error| error.to_string())
            },
        )?,
    };
    if settings.mode == SandboxMode::Off {
        settings.strict_inline_eval = false;
        return Ok(());
    }
    settings.isolation = match &args.isolation {
        Some(isolation) => isolation.parse().map_err(anyhow::Error::new)?,
        None => asker.choose(
            "Isolation (home, autodocs-read, autodocs-write, volumes, ephemeral)",
            settings.isolation.as_str(),
            "--isolation",
            |raw| raw.parse::<Isolation>().map_err(|error| error.to_string()),
        )?,
    };
    settings.network = if args.network || args.sandbox.is_some() {
        args.network
    } else {
        asker.choose(
            "Network for sandboxed commands (yes, no)",
            "no",
            "--network",
            |raw| match raw {
                "yes" | "y" => Ok(true),
                "no" | "n" => Ok(false),
                other => Err(format!("answer yes or no, not {other:?}")),
            },
        )?
    };
    Ok(())
}

/// Creates the workspace when it is missing, then says what would still refuse the sandboxed
/// runs of this config here (a workspace outside `allowedRoots`, one holding credentials).
fn prepare_workspace(settings: &Settings, asker: &mut Asker<'_>) -> anyhow::Result<()> {
    let text = settings.config_text(Preset::Custom);
    let config = gatehouse_config::load_str(&text, Path::new("setup"))?.config;
    let Ok(data_dir) = super::layout::default_data_dir() else {
        return Ok(());
    };
    let Ok(host) = super::sandbox::host_context(&config, None, &data_dir) else {
        return Ok(());
    };
    let workspace = match settings.workspace.strip_prefix("~/") {
        Some(below) => host.home.join(below),
        None if settings.workspace == "~" => host.home.clone(),
        None => PathBuf::from(&settings.workspace),
    };
    if !workspace.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&workspace)
            .with_context(|| format!("cannot create the workspace {}", workspace.display()))?;
        asker.say(&format!("Created the workspace {}.", workspace.display()))?;
    }
    for problem in check_settings(&config.sandbox_settings("main"), &host, "main") {
        asker.say(&format!(
            "Warning: sandboxed runs will be refused: {problem}"
        ))?;
    }
    Ok(())
}

fn parse_preset(raw: &str) -> Result<Preset, String> {
    let by_number = raw
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|index| Preset::ALL.get(index).copied());
    by_number
        .or_else(|| Preset::ALL.into_iter().find(|preset| preset.name() == raw))
        .ok_or_else(|| format!("choose 1-{} or a preset's name", Preset::ALL.len()))
}

/// The sandbox's rule for a written path (absolute or `~/…`), as the config loader applies it.
fn check_path(raw: &str) -> Result<(), String> {
    gatehouse_sandbox::check_written_path(raw).map_err(|refusal| refusal.to_string())
}

/// Writes `text` to `path` atomically, mode 0600, after copying an existing file to a backup
/// that did not exist before (`<file>.bak`, else `<file>.bak.1`, …); returns the backup.
fn write_config(path: &Path, text: &str) -> anyhow::Result<Option<PathBuf>> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let backup = if path.exists() {
        Some(backup(path)?)
    } else {
        None
    };
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "gatehouse.json5".to_owned());
    let temporary = dir.join(format!(".{name}.setup-{}", std::process::id()));
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(error).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(backup)
}

/// Copies `path` to the first of `<path>.bak`, `<path>.bak.1`, … that does not exist (created
/// exclusively, so an earlier backup is never overwritten), keeping its mode.
fn backup(path: &Path) -> anyhow::Result<PathBuf> {
    let old = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(path)?.permissions());
    for attempt in 0..1000 {
        let suffix = if attempt == 0 {
            ".bak".to_owned()
        } else {
            format!(".bak.{attempt}")
        };
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let candidate = PathBuf::from(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode & 0o777)
            .open(&candidate)
        {
            Ok(mut file) => {
                file.write_all(&old)?;
                file.sync_all()?;
                return Ok(candidate);
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => {
                return Err(error).with_context(|| format!("cannot write {}", candidate.display()));
            }
        }
    }
    bail!("{} has 1000 backups already; remove some", path.display())
}
