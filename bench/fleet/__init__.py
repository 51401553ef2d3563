"""The multi-host fleet test (`make fleet-test`): hosts made of network namespaces on one machine."""
