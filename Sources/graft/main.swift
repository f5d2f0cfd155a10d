import GraftCLI

GraftCommandLine.exit(GraftCommandLine.main(CommandLine.arguments))
