"""The control plane: a plain-Python planning loop that answers with an evidence sub-graph, or abstains."""
