"""What every browser engine shares: the page-side scripts argent injects (the walker, the page
monitor, the form controls), the walker's payload as a ``UiTree``, the stitching of frames' walks,
and what a ``launch:`` target means as a URL. Nothing here speaks an engine's protocol."""
