"""Deploying env services beyond one machine: Kubernetes manifests (``agenthub deploy k8s``)."""
