// "Chat delivery": chat targets whose delivery failed for good (`gateway.status` →
// `chat.failures`), so an operator sees that an approver never got a prompt and why.
// Retries finish after an approval's events, so the list is also refreshed on a timer.

const CHAT_REFRESH_MS = 15000;

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
      visibleSpan(`${str(failure.operation) ?? "?"} failed after ${Number(failure.attempts) || 0} attempts: `),
      visibleSpan(str(failure.error) ?? "unknown error"),
    )));
  }
}
