"""A kubeadm-style control-plane provider for capw, in Python: control-plane machines in the
cluster itself, an odd number of them so that etcd keeps a majority, changed one safe step at
a time. The same rules as plugins/kubeadm-control-plane, on contract 0.3.

Where to look: `config` for the config and its rules, `plan` for the planner (pure, no I/O;
its docs list the rules in order), `provider` for what the host sees.
"""

from .config import KubeadmControlPlaneConfig, Rollout
from .plan import PlanError
from .provider import KubeadmControlPlane

__all__ = ["KubeadmControlPlane", "KubeadmControlPlaneConfig", "PlanError", "Rollout"]
