"""The async flow engine. Reads files only through ``FlowFiles``; knows no HTTP."""
