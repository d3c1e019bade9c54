@testable import CofferApp
import CofferCore
import CofferInMemory
import Testing

/// Mounts an application registers must be typeable and must not shadow the standard ones.
struct MountRegistrationTests {
    @Test(arguments: ["files", "trash", "staging", "my mem", "9lives", "mem:", ""])
    func badNamesAreRefused(_ name: String) {
        #expect(throws: CofferError.self) {
            try CofferApplication.checkMountNames([Mount(name: name, backend: InMemoryBackend())])
        }
    }

    @Test func goodNamesPassOnceEach() throws {
        try CofferApplication.checkMountNames([Mount(name: "mem", backend: InMemoryBackend()),
                                               Mount(name: "cloud-2_b", backend: InMemoryBackend())])
        #expect(throws: CofferError.self) {
            try CofferApplication.checkMountNames([Mount(name: "mem", backend: InMemoryBackend()),
                                                   Mount(name: "mem", backend: InMemoryBackend())])
        }
    }
}
