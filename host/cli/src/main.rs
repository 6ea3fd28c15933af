//! `capw`: the command line of the capw host. `main` only wires: parse the flags, set up
//! logging, run the chosen command.

mod apply;
#[cfg(feature = "simcloud")]
mod bench;
#[cfg(feature = "simcloud")]
mod bench_hosted;
#[cfg(feature = "simcloud")]
mod bench_kube;
#[cfg(feature = "simcloud")]
mod bench_languages;
mod cli;
mod controller;
mod crds;
mod delete;
mod describe;
mod get;
mod inspect;
mod new;
mod oci;
mod plugin_test;
mod sim;
mod source;
mod state;
mod up;

use clap::Parser;

fn main() -> anyhow::Result<()> {
    let cli = cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CAPW_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(cli.log_level())),
        )
        .with_writer(std::io::stderr)
        // Colours only for a terminal: piped into a file or another program, escape
        // sequences are noise, and they would hide the ones a provider's text might carry.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // rustls has two crypto providers in this build (aws-lc through the OCI client's reqwest,
    // ring through kube and wasi:http) and cannot pick one on its own: ring it is.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(cli))
}

async fn run(cli: cli::Cli) -> anyhow::Result<()> {
    match cli.command {
        cli::Command::Plugin(cli::PluginCommand::Inspect(args)) => {
            inspect::run(&cli.global, args).await
        }
        cli::Command::Plugin(cli::PluginCommand::Push(args)) => oci::push(&cli.global, args).await,
        cli::Command::Plugin(cli::PluginCommand::Pull(args)) => oci::pull(args).await,
        cli::Command::Plugin(cli::PluginCommand::New(args)) => new::run(args).map(drop),
        cli::Command::Plugin(cli::PluginCommand::Test(args)) => {
            plugin_test::run(&cli.global, args).await
        }
        cli::Command::Apply(args) => apply::run(&cli.global, args).await,
        cli::Command::Get(args) => get::run(&cli.global, args).await,
        cli::Command::Describe(args) => describe::run(&cli.global, args).await,
        cli::Command::Delete(args) => delete::run(&cli.global, args),
        cli::Command::Up(args) => up::run(&cli.global, args).await,
        #[cfg(feature = "simcloud")]
        cli::Command::Bench(cli::BenchCommand::Converge(args)) => {
            bench::converge(&cli.global, args).await
        }
        #[cfg(feature = "simcloud")]
        cli::Command::Bench(cli::BenchCommand::Resync(args)) => {
            bench::resync(&cli.global, args).await
        }
        #[cfg(feature = "simcloud")]
        cli::Command::Bench(cli::BenchCommand::Kube(args)) => {
            bench_kube::kube(&cli.global, args).await
        }
        #[cfg(feature = "simcloud")]
        cli::Command::Bench(cli::BenchCommand::Hosted(args)) => {
            bench_hosted::hosted(&cli.global, args).await
        }
        #[cfg(feature = "simcloud")]
        cli::Command::Bench(cli::BenchCommand::Languages(args)) => bench_languages::run(args).await,
        #[cfg(not(feature = "simcloud"))]
        cli::Command::Bench(_) => Err(sim::missing("capw bench")),
        cli::Command::Controller(args) => controller::run(&cli.global, args).await,
        cli::Command::Crds => crds::run(),
    }
}
