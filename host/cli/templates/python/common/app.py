"""The component's entry module: `make` hands it to componentize-py, which finds the five
interfaces of the SDK's `provider` world as the classes of these names. The provider itself is
in provider.py; the points it does not serve answer `unsupported`."""

from capw.component import export

from provider import StarterProvider

Metadata, Infrastructure, Bootstrap, ControlPlane, LifecycleHooks = export(StarterProvider)
