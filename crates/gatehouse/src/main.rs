//! `gatehouse`: the one binary. It reads flags and config, calls the library crates and maps
//! their outcomes to exit codes; it holds no policy of its own.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("gatehouse: {error:#}");
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}
