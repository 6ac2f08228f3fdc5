//! `--route-*`: the chat a command's approval cards go to (the request's `turnSource`), as
//! `gatehouse mcp` and `gatehouse hook` take it.

/// Where approval cards go; with `approvals.exec.mode` `session` or `both`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct RouteArgs {
    /// Chat channel the approval cards go to (the request's `turnSource`), e.g. `telegram`.
    #[arg(long, value_name = "CHANNEL", requires = "route_to")]
    pub(crate) route_channel: Option<String>,
    /// The chat (or channel) id in `--route-channel` that gets the cards.
    #[arg(long, value_name = "ID", requires = "route_channel")]
    pub(crate) route_to: Option<String>,
    /// The thread (topic) in `--route-to`.
    #[arg(long, value_name = "ID", requires = "route_to")]
    pub(crate) route_thread: Option<String>,
    /// The bot account of `--route-channel`, when the gateway runs several.
    #[arg(long, value_name = "ID", requires = "route_to")]
    pub(crate) route_account: Option<String>,
}
