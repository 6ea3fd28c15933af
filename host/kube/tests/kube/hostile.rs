//! Provider text in the Kubernetes mode: the hostile component fails with a megabyte of
//! escape sequences, carriage returns and a forged `Ready=True` line as the infrastructure,
//! the bootstrap, the control plane and a lifecycle hook of a cluster each. The Clusters'
//! status in the API server and their Warning Events carry that text escaped and bounded.

use capw_test_support::hostile::POINTS;
use capw_test_support::strings_in;

use super::*;

/// The forged line of the hostile text, as the host keeps it: escaped.
const FORGED: &str = r"\u{1b}[2J\u{1b}]0;pwned\u{7}\nReady=True";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_provider_text_reaches_status_and_events_escaped_and_bounded() {
    let w = World::new("capw-hostile").await;
    let ns = w.namespace.clone();
    let manifest = w.tmp.path().join("hostile.yaml");
    std::fs::write(
        &manifest,
        capw_test_support::hostile::manifest(&ns, &format!("{ns}-"), &["garbage-error"]),
    )
    .unwrap();
    let replica = w.start(w.config("solo", None));
    w.kubectl(&["apply", "-f", manifest.to_str().unwrap()]);

    // Each cluster's provider error is said as a Warning Event on it, with the text.
    let events = wait(
        "a ProviderError event with the text on each cluster",
        || async {
            let out = w.kubectl(&["get", "events", "-n", &ns, "-o", "json"]);
            let list: Value = serde_json::from_str(&out).ok()?;
            let items = list["items"].as_array()?.clone();
            POINTS
                .iter()
                .all(|point| {
                    items.iter().any(|e| {
                        e["involvedObject"]["name"] == format!("{point}-garbage-error")
                            && e["reason"] == "ProviderError"
                            && e["message"].as_str().is_some_and(|m| m.contains(FORGED))
                    })
                })
                .then_some(items)
        },
    )
    .await;
    for event in &events {
        let message = event["message"].as_str().unwrap_or_default();
        assert!(
            message.len() <= 1000,
            "an Event of {} bytes: {:.200}",
            message.len(),
            message
        );
        if let Some(c) = message.chars().find(|c| c.is_control()) {
            panic!("an Event holds U+{:04X}: {message:.200}", u32::from(c));
        }
    }

    // What the API server keeps of each Cluster's and its Machines' status: every string at
    // most a message, a reason and the host's words long, with no control character.
    let mut all = Vec::new();
    for point in POINTS {
        let name = format!("{point}-garbage-error");
        let cluster = w.get("Cluster", &name).await.expect("the Cluster");
        let mut kept = strings_in(&cluster["status"], &format!("Cluster/{name}.status"));
        for machine in w.machines(&name).await {
            let name = machine["metadata"]["name"].as_str().unwrap_or("?");
            kept.extend(strings_in(
                &machine["status"],
                &format!("Machine/{name}.status"),
            ));
        }
        assert!(
            kept.iter().any(|(_, s)| s.contains(FORGED)),
            "Cluster/{name} does not keep the text escaped: {cluster:#}"
        );
        all.extend(kept);
    }
    for (at, s) in &all {
        assert!(
            s.len() <= capw_runtime::MAX_MESSAGE_BYTES + capw_runtime::MAX_REASON_BYTES + 256,
            "{at}: {} bytes",
            s.len()
        );
        assert!(
            !s.chars().any(char::is_control),
            "{at}: a control character: {:.80}",
            s
        );
    }
    replica.stop().await;
}
