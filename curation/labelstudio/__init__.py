"""Label Studio at the toolkit's side: the access gate annotators reach it through."""
