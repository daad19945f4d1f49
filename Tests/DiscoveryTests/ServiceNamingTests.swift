import Testing

@testable import Discovery

@Suite("Service naming")
struct ServiceNamingTests {
    @Test(arguments: [
        ("orders", "_orders"),
        ("Orders", "_orders"),
        ("my_db.v2", "_my-db-v2"),
        ("--a  b--", "_a-b"),
        ("db/with$(odd)+chars", "_db-with-odd-chars"),
        ("Ünïcode", "_n-code"),
        ("", "_default"),
        ("___", "_default"),
        ("a1-b2", "_a1-b2"),
    ])
    func sanitizesGroupsToDNSLabels(group: String, label: String) {
        #expect(ServiceNaming.subtypeLabel(forGroup: group) == label)
    }

    @Test func longGroupsAreCutAndHashed() {
        let base = String(repeating: "x", count: 70)
        let first = ServiceNaming.subtypeLabel(forGroup: base + "1")
        let second = ServiceNaming.subtypeLabel(forGroup: base + "2")
        #expect(first.utf8.count <= 63)
        #expect(second.utf8.count <= 63)
        #expect(first != second)
        #expect(first.hasPrefix("_" + String(repeating: "x", count: 53) + "-"))
        #expect(first == ServiceNaming.subtypeLabel(forGroup: base + "1"))  // deterministic
        let exactly62 = String(repeating: "y", count: 62)
        #expect(ServiceNaming.subtypeLabel(forGroup: exactly62) == "_" + exactly62)
    }

    @Test func buildsRegTypesAndSubtypeNames() {
        #expect(ServiceNaming.subtypeName(serviceType: "_shoal._tcp", group: "Orders") == "_orders._sub._shoal._tcp")
    }

    @Test func instanceNamesFitInOneLabel() {
        #expect(ServiceNaming.instanceName(forNodeID: "3F2504E0-4F89-11D3-9A0C-0305E82C3301") == "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        #expect(ServiceNaming.instanceName(forNodeID: "") == "shoal")
        let accented = String(repeating: "é", count: 40)  // 80 bytes
        let name = ServiceNaming.instanceName(forNodeID: accented)
        #expect(name == String(repeating: "é", count: 31))
        #expect(name.utf8.count == 62)
    }

    @Test func txtGroupKeepsTheRawGroupWhenItFits() {
        #expect(ServiceNaming.txtGroupValue(for: "Orders!") == "Orders!")
        let long = String(repeating: "g", count: 300)
        #expect(ServiceNaming.txtGroupValue(for: long) == String(ServiceNaming.subtypeLabel(forGroup: long).dropFirst()))
    }

    @Test func fnvAndHexAreStable() {
        #expect(ServiceNaming.fnv1a32([]) == 0x811C_9DC5)
        #expect(ServiceNaming.fnv1a32(Array("a".utf8)) == 0xE40C_292C)
        #expect(ServiceNaming.hex8(0xAB) == "000000ab")
    }
}
