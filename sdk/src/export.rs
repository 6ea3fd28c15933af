//! The macro that exports a provider as the contract's `provider` world.

/// Exports a provider type as the component's implementation of the whole `provider` world,
/// with the provider's version taken from the invoking crate's `Cargo.toml`.
///
/// Invoke it once, at the root of the provider crate (a `cdylib` built for `wasm32-wasip2`),
/// with the name of a type that implements [`Provider`](crate::Provider) and the four
/// extension-point traits:
///
/// ```ignore
/// capw_sdk::export_provider!(MyProvider);
/// ```
///
/// The `unsupported` form writes the implementations of the points the provider does not
/// serve, with `SUPPORTED = false`: `describe` leaves them out and their functions answer
/// `unsupported`.
///
/// ```ignore
/// capw_sdk::export_provider!(MyProvider, unsupported: [Bootstrap, ControlPlane]);
/// ```
///
/// The list takes the trait names `Infrastructure`, `Bootstrap`, `ControlPlane` and
/// `LifecycleHooks`. The provider must be named by a plain identifier (no path, no generics):
/// the contract's generated export macro takes nothing else.
///
/// # Caveats
///
/// The component exports exist on `wasm32` targets only. Elsewhere (a provider's native unit
/// tests) the macro writes just the trait implementations: the contract's export names, such
/// as `capw:provider/metadata@0.3.0#describe`, cannot be linked into a native library, and
/// there is no host to call them. Native tests call the traits, or
/// [`metadata::describe`](crate::metadata::describe) and
/// [`metadata::validate_config`](crate::metadata::validate_config), directly.
#[macro_export]
macro_rules! export_provider {
    ($provider:ident $(,)?) => {
        impl $crate::__Version for $provider {
            const VERSION: &'static str = env!("CARGO_PKG_VERSION");
        }

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            $crate::__bindings::__export_provider_world!(
                $provider with_types_in $crate::__bindings
            );
        };
    };
    ($provider:ident, unsupported: [$($point:ident),* $(,)?] $(,)?) => {
        $(
            impl $crate::$point for $provider {
                const SUPPORTED: bool = false;
                $crate::__unsupported_items!($point);
            }
        )*
        $crate::export_provider!($provider);
    };
}

/// The items an unsupported extension point's implementation needs beside `SUPPORTED`: a
/// shape for `ControlPlane`, which `describe` leaves out anyway.
#[doc(hidden)]
#[macro_export]
macro_rules! __unsupported_items {
    (ControlPlane) => {
        const SHAPE: $crate::metadata::ControlPlaneShape =
            $crate::metadata::ControlPlaneShape::Machines;
    };
    ($point:ident) => {};
}
