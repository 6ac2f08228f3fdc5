//! `gatehouse`: the one binary. It reads flags and config, calls the library crates and maps
//! their outcomes to exit codes; it holds no policy of its own.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        // A reader that went away (`gatehouse check … | head`) is not an error to report; exit
        // as the tools it is piped with do when SIGPIPE ends them.
        Err(error) if is_broken_pipe(&error) => ExitCode::from(EXIT_BROKEN_PIPE),
        Err(error) => {
            eprintln!("gatehouse: {error:#}");
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}

/// 128 plus SIGPIPE's number, what a shell reports for a program SIGPIPE ended.
const EXIT_BROKEN_PIPE: u8 = 141;

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
