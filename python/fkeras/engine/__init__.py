"""The graph engine: symbolic tensors, nodes, variables, naming and the gradient tape."""
