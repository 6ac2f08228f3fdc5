// "Chat delivery": every approval message not delivered, not edited or lost, and every reply
// that failed (`gateway.status` → `chat.failures`), each with its last error, so an operator sees
// that an approver has no prompt, or a settled card still shows buttons, and why. Entries go
// away only when that very message is fixed; retries run on their own clock, so the list is
// also refreshed on a timer.

const CHAT_REFRESH_MS = 15000;

// What went wrong: "card for approval 0f3c9a1e undelivered" for an approval message (its
// `problem`), "send failed" for a reply.
function chatFailureText(failure) {
  const problem = str(failure.problem);
  if (!problem) return `${str(failure.operation) ?? "?"} failed`;
  const id = str(failure.approvalId);
  const about = id ? ` for approval ${id.slice(0, 8)}` : "";
  return `${str(failure.kind) ?? "message"}${about} ${problem}`;
}

class ChatDeliveryView {
  constructor(gateway) {
    this.gateway = gateway;
    setInterval(() => {
      if (document.body.dataset.connection === "connected") this.load();
    }, CHAT_REFRESH_MS);
  }

  async load() {
    let status;
    try {
      status = await this.gateway.request("gateway.status", {});
    } catch (error) {
      this.show([], `Cannot read chat delivery status: ${error.message}`);
      return;
    }
    const failures = status && status.chat && Array.isArray(status.chat.failures)
      ? status.chat.failures
      : [];
    this.show(failures, "");
  }

  show(failures, problem) {
    $("chat-delivery").hidden = failures.length === 0 && !problem;
    $("chat-delivery-problem").textContent = problem;
    $("chat-delivery-problem").hidden = !problem;
    $("chat-failures").replaceChildren(...failures.map((failure) => el("li", {},
      visibleSpan(`${str(failure.channel) ?? "?"} → ${str(failure.target) ?? "?"}: `),
      visibleSpan(`${chatFailureText(failure)} after ${Number(failure.attempts) || 0} attempts: `),
      visibleSpan(str(failure.error) ?? "unknown error"),
    )));
  }
}
