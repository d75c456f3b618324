class Budget extends StatelessWidget {
  final OfferData offer;
  Widget build(BuildContext context) {
    final a = Text('${offer['title']} x${offer.items[0].amount}', style: TextStyle(fontSize: 600));
    final b = Row(children: [a, a, Expanded(child: a)]);
    return Stack(children: [Column(children: [b, b, _tile(2)]), Positioned(left: 10, child: OfferButton(item: offer.items[0]))]);
  }
  Widget _tile(int i) => Container(width: 1e9, padding: EdgeInsets.all(i * 4.0), child: Image(item: offer.items[0], fit: BoxFit.cover));
}
