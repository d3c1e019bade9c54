import CofferApp

// `coffer`: the standard mounts and both front ends, nothing added.
await CofferApplication(name: "coffer").main()
