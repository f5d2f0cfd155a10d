import GraftCLI
