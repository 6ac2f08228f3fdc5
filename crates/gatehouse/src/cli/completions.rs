//! `gatehouse completions bash|zsh|fish`: the shell completion script, generated from the same
//! command definitions the parser uses, so it never lists a flag that does not exist.

use std::process::ExitCode;

use clap::CommandFactory as _;
use clap_complete::Shell;

/// Flags of `gatehouse completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  source <(gatehouse completions bash)                         # this bash session
  gatehouse completions bash > ~/.local/share/bash-completion/completions/gatehouse
  gatehouse completions zsh > \"${fpath[1]}/_gatehouse\"
  gatehouse completions fish > ~/.config/fish/completions/gatehouse.fish")]
pub(crate) struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: CompletionShell,
}

/// The shells a script is generated for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

/// Prints the script on stdout.
pub(crate) fn run(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let shell = match args.shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    let mut command = super::Cli::command();
    clap_complete::generate(shell, &mut command, "gatehouse", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
