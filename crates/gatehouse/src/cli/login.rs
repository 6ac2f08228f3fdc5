//! `gatehouse login` and `gatehouse logout`: save a gateway's URL and a token for it under a
//! name (a context), list them, switch between them, and forget them. The token is checked
//! with the gateway before it is saved, so a context always named a token that worked.

use std::io::{BufRead as _, IsTerminal as _};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use gatehouse_chat::sanitize::one_line;
use serde_json::{Value, json};

use super::client::contexts::{Contexts, Identity, Saved};
use super::client::target::{DEFAULT_URL, Environment};
use super::client::{ServerArgs, Target, block_on};
use super::listing::Table;

/// Flags of `gatehouse login`.
#[derive(Debug, clap::Args)]
#[command(after_help = LOGIN_EXAMPLES)]
pub(crate) struct LoginArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Read the token from standard input (one line), so it appears in no command line.
    #[arg(long, conflicts_with_all = ["list", "use_context"])]
    with_token: bool,
    /// List the saved contexts instead.
    #[arg(long, conflicts_with = "use_context")]
    list: bool,
    /// Make the saved context NAME the current one, without logging in again.
    #[arg(long = "use", value_name = "NAME")]
    use_context: Option<String>,
    /// With --list: print JSON (never the tokens).
    #[arg(long, requires = "list")]
    json: bool,
}

const LOGIN_EXAMPLES: &str = "\
Examples:
  # Save the gateway at URL as context `prod`, reading the token from a file:
  gatehouse login --context prod --url https://gatehouse.example.com --with-token < ops.token
  # The saved contexts; `*` marks the current one:
  gatehouse login --list
  # Switch, or use another context for one command:
  gatehouse login --use prod
  gatehouse approvals list --context staging

Commands find their gateway in this order: --url/--token, GATEHOUSE_URL/GATEHOUSE_TOKEN,
--context (or GATEHOUSE_CONTEXT, else the current context), then the gateway on this
machine (http://127.0.0.1:18790 with its <data-dir>/admin.token).";

/// Flags of `gatehouse logout`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gatehouse logout                   # forget the current context
  gatehouse logout --context prod    # forget context prod")]
pub(crate) struct LogoutArgs {
    /// The context to forget [default: the current one].
    #[arg(long, value_name = "NAME")]
    context: Option<String>,
}

/// Runs `gatehouse login`.
pub(crate) fn login(args: LoginArgs) -> anyhow::Result<ExitCode> {
    let path = contexts_path()?;
    let mut contexts = Contexts::load(&path)?;
    if args.list {
        print_list(&contexts, args.json);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.use_context {
        contexts.use_context(name)?;
        contexts.save(&path)?;
        println!("Current context: {}", one_line(name, 100));
        return Ok(ExitCode::SUCCESS);
    }
    let env = Environment::current();
    let url = args
        .server
        .url
        .clone()
        .or(env.url.clone())
        .unwrap_or_else(|| DEFAULT_URL.to_owned());
    let token = match (&args.server.token, args.with_token, &env.token) {
        (Some(token), _, _) => token.clone(),
        (None, true, _) => read_token_line()?,
        (None, false, Some(token)) => token.clone(),
        (None, false, None) => bail!(
            "give the token: `gatehouse login --url URL --with-token < FILE` (or --token, or \
             GATEHOUSE_TOKEN)"
        ),
    };
    let name = args
        .server
        .context
        .clone()
        .unwrap_or_else(|| default_name(&url));
    // Only the URL and token just given: no context or local token takes part in the check.
    let target = Target::resolve(
        &ServerArgs::new(url.clone(), token.clone()),
        &Environment::default(),
    )?;
    let status = block_on(target.call("gateway.status", json!({})))
        .with_context(|| format!("not saved: the gateway at {url} did not accept the token"))?;
    let identity = identity_of(&status);
    contexts.insert(&name, Saved::new(&url, &token, identity.clone()), true);
    contexts.save(&path)?;
    println!(
        "Logged in to {} as {}; saved as context {} (current) in {}",
        one_line(&url, 200),
        identity
            .as_ref()
            .map_or_else(|| "?".to_owned(), shown_identity),
        one_line(&name, 100),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs `gatehouse logout`.
pub(crate) fn logout(args: LogoutArgs) -> anyhow::Result<ExitCode> {
    let path = contexts_path()?;
    let mut contexts = Contexts::load(&path)?;
    let name = match args.context {
        Some(name) => name,
        None => match contexts.current_name() {
            Some(name) => name.to_owned(),
            None => bail!("no current context; name one with --context (`gatehouse login --list`)"),
        },
    };
    contexts.remove(&name)?;
    contexts.save(&path)?;
    println!("Forgot context {} and its token", one_line(&name, 100));
    Ok(ExitCode::SUCCESS)
}

fn contexts_path() -> anyhow::Result<std::path::PathBuf> {
    super::client::contexts::default_path()
        .context("cannot find where to keep contexts: neither XDG_CONFIG_HOME nor HOME is set")
}

/// One line from standard input, trimmed; a terminal is asked for it on stderr.
fn read_token_line() -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprint!("Token (input is shown; prefer `--with-token < FILE`): ");
    }
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .context("cannot read the token from standard input")?;
    let token = line.trim().to_owned();
    if token.is_empty() {
        bail!("no token on standard input");
    }
    Ok(token)
}

/// A context's name when none is given: the URL's host and port.
fn default_name(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

/// The token's name and scopes as `gateway.status` reports them.
pub(crate) fn identity_of(status: &Value) -> Option<Identity> {
    let caller = status.get("caller")?;
    Some(Identity {
        name: caller.get("name")?.as_str()?.to_owned(),
        scopes: caller
            .get("scopes")?
            .as_array()?
            .iter()
            .filter_map(|scope| scope.as_str().map(str::to_owned))
            .collect(),
    })
}

/// `name (scope, scope)`.
pub(crate) fn shown_identity(identity: &Identity) -> String {
    format!(
        "{} ({})",
        one_line(&identity.name, 100),
        identity.scopes.join(", ")
    )
}

fn print_list(contexts: &Contexts, json: bool) {
    let current = contexts.current_name();
    if json {
        let list: Vec<Value> = contexts
            .iter()
            .map(|(name, saved)| {
                json!({
                    "name": name,
                    "url": saved.url,
                    "current": Some(name) == current,
                    "identity": saved.identity.as_ref().map(|identity| json!({
                        "name": identity.name, "scopes": identity.scopes,
                    })),
                })
            })
            .collect();
        println!("{}", json!({"contexts": list}));
        return;
    }
    let mut table = Table::new(["CURRENT", "NAME", "URL", "IDENTITY"]);
    for (name, saved) in contexts.iter() {
        table.row([
            if Some(name) == current { "*" } else { "" }.to_owned(),
            one_line(name, 100),
            one_line(&saved.url, 200),
            saved
                .identity
                .as_ref()
                .map_or_else(|| "-".to_owned(), shown_identity),
        ]);
    }
    if table.is_empty() {
        eprintln!("no saved contexts; `gatehouse login --url URL --with-token < FILE` saves one");
        return;
    }
    print!("{table}");
}
