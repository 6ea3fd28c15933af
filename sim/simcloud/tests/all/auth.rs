use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, WWW_AUTHENTICATE};

use crate::support::{Sim, body, error};

#[tokio::test]
async fn every_api_route_needs_the_token() {
    let sim = Sim::start().await;
    let routes = [
        "/v1/zones",
        "/v1/instances",
        "/v1/instances/i-1",
        "/v1/networks",
        "/v1/load-balancers",
        "/v1/managed-control-planes",
        "/v1/clusters/c1/bootstrap",
        "/v1/inventory",
        "/v1/admin/faults",
    ];
    for route in routes {
        let r = sim.client.get(sim.url(route)).send().await.expect("send");
        assert_eq!(
            r.headers().get(WWW_AUTHENTICATE).map(|v| v.as_bytes()),
            Some(&b"Bearer"[..])
        );
        let e = error(r, StatusCode::UNAUTHORIZED).await;
        assert_eq!(e.error.code, "unauthorized", "{route}");
        let r = sim
            .client
            .get(sim.url(route))
            .bearer_auth("wrong-token")
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{route}");
    }
    // Writes too, before their body is even read.
    let r = sim
        .client
        .post(sim.url("/v1/instances"))
        .body("garbage")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_right_token_passes_in_any_scheme_case() {
    let sim = Sim::start().await;
    let r = sim
        .client
        .get(sim.url("/v1/zones"))
        .header(
            AUTHORIZATION,
            format!("bearer {}", crate::support::API_TOKEN),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    let zones: capw_simcloud::model::ZoneList = body(r).await;
    assert_eq!(zones.zones, ["zone-a", "zone-b", "zone-c"]);
    let r = sim
        .client
        .get(sim.url("/v1/zones"))
        .header(
            AUTHORIZATION,
            format!("Basic {}", crate::support::API_TOKEN),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn health_is_open() {
    let sim = Sim::start().await;
    let r = sim
        .client
        .get(sim.url("/healthz"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
}
