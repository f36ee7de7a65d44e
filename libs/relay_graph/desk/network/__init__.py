"""The access network: its typed inputs and outputs (`models`), building it and marking nodes up
and down (`store`), the network as the algorithms read it (`graph`), the questions answered over it
(`algorithms`) and customers' homes hung off it (`homes`).

May use: `relay_graph.memory`, `relay_graph.runtime`, the desk's `catalogue` and `queries`."""
