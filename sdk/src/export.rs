//! The macro that exports a provider as the contract's `provider` world.

/// Exports a provider type as the component's implementation of the whole `provider` world.
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
/// as `capw:provider/metadata@0.1.0#describe`, cannot be linked into a native library, and
/// there is no host to call them. Native tests call the traits, or
/// [`metadata::describe`](crate::metadata::describe) and
/// [`metadata::validate_config`](crate::metadata::validate_config), directly.
#[macro_export]
macro_rules! export_provider {
    ($provider:ident $(,)?) => {
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
            }
        )*
        $crate::export_provider!($provider);
    };
}
