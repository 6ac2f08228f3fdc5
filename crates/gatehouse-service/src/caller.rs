//! Who is asking: what a transport learned when it authenticated the request.

/// The authenticated caller of a use case. The transport implements it (the gateway's bearer
/// tokens); the service only asks the questions below, never how they were answered.
pub trait Caller: Send + Sync {
    /// The token's name: approvals are owned by it, and a session's stored level counts only
    /// for the token whose agent host bound the session.
    fn name(&self) -> &str;

    /// Whether it may see and answer every approval (operators); otherwise it sees only those
    /// it requested, and names them by full id only.
    fn sees_every_approval(&self) -> bool;

    /// Whether it may make requests for `agent_id`: the agent's policy is chosen by that id, so
    /// a token restricted to some agents cannot borrow another's.
    fn may_act_for(&self, agent_id: &str) -> bool;
}
